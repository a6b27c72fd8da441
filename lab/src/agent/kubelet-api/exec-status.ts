/**
 * What the kubelet writes on a remote command's error stream when the command is over. From v4.channel.k8s.io
 * on it is a metav1.Status as JSON, Success or Failure, a non-zero exit code riding in details.causes; v2 and v3
 * carry only a failure's message as text, and nothing on success.
 */

export interface StreamStatus {
  status: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: { causes: { reason: string; message: string }[] };
  code?: number;
}

export const successStatus: StreamStatus = { status: "Success" };

export function exitCodeStatus(command: readonly string[], exitCode: number): StreamStatus {
  return {
    status: "Failure",
    message: `command terminated with non-zero exit code: command '${command.join(" ")}' exited with ${exitCode}`,
    reason: "NonZeroExitCode",
    details: { causes: [{ reason: "ExitCode", message: String(exitCode) }] },
  };
}

export function internalErrorStatus(message: string): StreamStatus {
  return {
    status: "Failure",
    message: `Internal error occurred: ${message}`,
    reason: "InternalError",
    code: 500,
  };
}

/** The error stream's bytes for a status under the negotiated protocol (empty: write nothing). */
export function encodeStatus(status: StreamStatus, protocol: string): Buffer {
  if (protocol === "v4.channel.k8s.io" || protocol === "v5.channel.k8s.io")
    return Buffer.from(JSON.stringify(status));
  return Buffer.from(status.status === "Success" ? "" : (status.message ?? ""));
}
