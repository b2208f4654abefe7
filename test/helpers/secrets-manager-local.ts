// A local HTTP endpoint answering Secrets Manager's GetSecretValue (JSON 1.1 protocol) from a
// map, so the real SDK client (AWS_ENDPOINT_URL_SECRETS_MANAGER or `endpoint`) reads test
// secrets. It is a stand-in for the service, not a mock of the SDK: the SDK's request signing,
// serialisation and error parsing all run.
import { createServer, type Server } from "node:http";

export interface LocalSecretsManager {
  readonly endpoint: string;
  /** SecretId of every GetSecretValue call, in order. */
  readonly requests: readonly string[];
  setSecret(arn: string, value: Record<string, string>): void;
  stop(): Promise<void>;
}

export async function startLocalSecretsManager(): Promise<LocalSecretsManager> {
  const secrets = new Map<string, string>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      res.setHeader("content-type", "application/x-amz-json-1.1");
      const target = String(req.headers["x-amz-target"] ?? "");
      const { SecretId } = JSON.parse(body || "{}") as { SecretId?: string };
      const value = SecretId === undefined ? undefined : secrets.get(SecretId);
      if (target !== "secretsmanager.GetSecretValue" || SecretId === undefined || value === undefined) {
        res.statusCode = 400;
        res.end(
          JSON.stringify({
            __type: "ResourceNotFoundException",
            message: "Secrets Manager can't find the specified secret.",
          }),
        );
        return;
      }
      requests.push(SecretId);
      res.end(
        JSON.stringify({
          ARN: SecretId,
          Name: SecretId.split(":").pop(),
          SecretString: value,
          VersionId: "v1",
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address !== "object") throw new Error("no port");
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    requests,
    setSecret: (arn, value) => secrets.set(arn, JSON.stringify(value)),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
