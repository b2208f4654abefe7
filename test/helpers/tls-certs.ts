// Test certificates made with openssl per run: a private CA, a server certificate it signed for
// 127.0.0.1/localhost, a client certificate (for mutual TLS) and an unrelated CA. Files stay in
// `dir` (PEM), for tools that take paths (stunnel, kcat, the CLI); the texts are read back for
// options that take PEM strings (our kafkajs ssl options, a Secrets Manager secret).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PemFile {
  readonly path: string;
  readonly pem: string;
}

export interface TestPki {
  readonly dir: string;
  readonly ca: PemFile;
  readonly otherCa: PemFile;
  readonly serverCert: PemFile;
  readonly serverKey: PemFile;
  readonly clientCert: PemFile;
  readonly clientKey: PemFile;
  /** Removes the directory and every key in it. */
  remove(): void;
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "kafka-mirror-pki-"));
  const openssl = (...args: string[]): void => {
    execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  };
  const newKey = (name: string): string[] => ["-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`];
  const newCa = (name: string): void =>
    openssl("req", "-x509", ...newKey(name), "-days", "1", "-out", `${name}.pem`, "-subj", `/CN=${name}`);
  const issue = (name: string, ext: string): void => {
    openssl("req", ...newKey(name), "-out", `${name}.csr`, "-subj", `/CN=${name}`);
    writeFileSync(join(dir, `${name}.ext`), ext);
    const signing = ["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1"];
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      ...signing,
      "-out",
      `${name}.pem`,
      "-extfile",
      `${name}.ext`,
    );
  };
  newCa("ca");
  newCa("other-ca");
  issue("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  issue("client", "extendedKeyUsage=clientAuth\n");
  const file = (name: string): PemFile => {
    const path = join(dir, name);
    return { path, pem: readFileSync(path, "utf8") };
  };
  return {
    dir,
    ca: file("ca.pem"),
    otherCa: file("other-ca.pem"),
    serverCert: file("server.pem"),
    serverKey: file("server.key"),
    clientCert: file("client.pem"),
    clientKey: file("client.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
