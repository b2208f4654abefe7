// The server side of SASL PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677), as a
// Kafka broker runs them: tokens in, tokens out, a SaslFailure when the client is not who it says.
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";

export type SaslMechanism = "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";
export const SASL_MECHANISMS: readonly SaslMechanism[] = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"];

export class SaslFailure extends Error {
  override readonly name = "SaslFailure";
}

export interface SaslStep {
  /** Token to send back (empty for PLAIN). */
  readonly reply: Buffer;
  /** Set once the client is authenticated. */
  readonly username?: string;
}

export interface SaslExchange {
  /** Throws SaslFailure when authentication fails. */
  step(token: Buffer): SaslStep;
}

export function startExchange(
  mechanism: SaslMechanism,
  users: ReadonlyMap<string, string>,
  iterations: number,
): SaslExchange {
  if (mechanism === "PLAIN") return plainExchange(users);
  return new ScramExchange(mechanism === "SCRAM-SHA-256" ? "sha256" : "sha512", users, iterations);
}

function plainExchange(users: ReadonlyMap<string, string>): SaslExchange {
  return {
    step(token) {
      // authzid NUL authcid NUL passwd
      const parts = token.toString("utf8").split("\0");
      if (parts.length !== 3) throw new SaslFailure("malformed PLAIN token");
      const [authzid, username = "", password = ""] = parts;
      if (authzid !== "" && authzid !== username) throw new SaslFailure("authorization id not allowed");
      const expected = users.get(username);
      if (expected === undefined || !sameText(expected, password))
        throw new SaslFailure("invalid credentials");
      return { reply: Buffer.alloc(0), username };
    },
  };
}

type Hash = "sha256" | "sha512";

class ScramExchange implements SaslExchange {
  #state: "first" | "final" | "done" = "first";
  #username = "";
  #gs2Header = "";
  #nonce = "";
  #clientNonce = "";
  #clientFirstBare = "";
  #serverFirst = "";
  #saltedPassword = Buffer.alloc(0);

  constructor(
    private readonly hash: Hash,
    private readonly users: ReadonlyMap<string, string>,
    private readonly iterations: number,
  ) {}

  step(token: Buffer): SaslStep {
    const message = token.toString("utf8");
    if (this.#state === "first") return this.#clientFirst(message);
    if (this.#state === "final") return this.#clientFinal(message);
    throw new SaslFailure("SCRAM exchange already finished");
  }

  /** client-first-message = gs2-header client-first-message-bare; gs2-header = "n,," (no binding). */
  #clientFirst(message: string): SaslStep {
    const match = /^([ny]),(a=[^,]*)?,(.*)$/.exec(message);
    if (!match) throw new SaslFailure("malformed SCRAM client-first-message");
    this.#gs2Header = `${match[1]},${match[2] ?? ""},`;
    this.#clientFirstBare = match[3] ?? "";
    const attrs = attributes(this.#clientFirstBare);
    const user = attrs.get("n");
    const clientNonce = attrs.get("r");
    if (user === undefined || !clientNonce) throw new SaslFailure("client-first-message lacks n= or r=");
    this.#username = user.replace(/=2C/g, ",").replace(/=3D/g, "=");
    const password = this.users.get(this.#username);
    if (password === undefined) throw new SaslFailure("invalid credentials");
    const salt = randomBytes(16);
    this.#saltedPassword = pbkdf2Sync(password, salt, this.iterations, digestBytes(this.hash), this.hash);
    this.#clientNonce = clientNonce;
    this.#nonce = clientNonce + randomBytes(18).toString("base64");
    this.#serverFirst = `r=${this.#nonce},s=${salt.toString("base64")},i=${this.iterations}`;
    this.#state = "final";
    return { reply: Buffer.from(this.#serverFirst, "utf8") };
  }

  /**
   * RFC 5802 wants exactly server-first's nonce back. librdkafka before 2.6.1 (kcat here is on
   * 2.0.2) sends the client nonce once more in front of it (confluentinc/librdkafka#4895);
   * Kafka 3.8.1-3.9 accepted that (an `endsWith` check), Kafka 4 refuses it. We accept exactly
   * those two shapes, nothing looser.
   */
  #nonceMatches(echoed: string | undefined): boolean {
    return echoed === this.#nonce || echoed === this.#clientNonce + this.#nonce;
  }

  /** client-final-message = c=base64(gs2-header),r=nonce,p=base64(ClientKey XOR ClientSignature). */
  #clientFinal(message: string): SaslStep {
    this.#state = "done";
    const proofAt = message.lastIndexOf(",p=");
    if (proofAt < 0) throw new SaslFailure("client-final-message lacks p=");
    const withoutProof = message.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    if (attrs.get("c") !== Buffer.from(this.#gs2Header, "utf8").toString("base64"))
      throw new SaslFailure("channel binding does not match the gs2 header");
    if (!this.#nonceMatches(attrs.get("r"))) throw new SaslFailure("nonce does not match server-first's");
    const proof = Buffer.from(message.slice(proofAt + 3), "base64");
    const authMessage = `${this.#clientFirstBare},${this.#serverFirst},${withoutProof}`;
    const clientKey = hmac(this.hash, this.#saltedPassword, "Client Key");
    const storedKey = createHash(this.hash).update(clientKey).digest();
    const clientSignature = hmac(this.hash, storedKey, authMessage);
    if (proof.length !== clientSignature.length) throw new SaslFailure("invalid credentials");
    const recoveredKey = Buffer.from(proof.map((b, i) => b ^ (clientSignature[i] ?? 0)));
    const recoveredStored = createHash(this.hash).update(recoveredKey).digest();
    if (!timingSafeEqual(recoveredStored, storedKey)) throw new SaslFailure("invalid credentials");
    const serverKey = hmac(this.hash, this.#saltedPassword, "Server Key");
    const serverSignature = hmac(this.hash, serverKey, authMessage).toString("base64");
    return { reply: Buffer.from(`v=${serverSignature}`, "utf8"), username: this.#username };
  }
}

function attributes(message: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of message.split(",")) {
    const eq = part.indexOf("=");
    if (eq === 1) map.set(part.slice(0, 1), part.slice(2));
  }
  return map;
}

function hmac(hash: Hash, key: Buffer, data: string): Buffer {
  return createHmac(hash, key).update(data, "utf8").digest();
}

function digestBytes(hash: Hash): number {
  return hash === "sha256" ? 32 : 64;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
