/** Why a local file (config, PEM, credentials) could not be read, in the operator's words. */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return "not found";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a directory, not a file";
  return error instanceof Error ? error.message : String(error);
}
