/** The meta/v1 Status object the apiserver returns with failures. */
export interface Status {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: Record<string, unknown>;
}

/**
 * A failed API call. `code` is the HTTP status (or the code of a watch ERROR
 * event); `reason` is the Status reason such as "NotFound" or "Conflict".
 */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  /** The parsed Status when the server sent one, else the raw body text. */
  readonly body: Status | string | undefined;

  constructor(code: number, reason: string, message: string, body?: Status | string) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.reason = reason;
    this.body = body;
  }

  /** Builds an error from a response status code and body text. */
  static fromResponse(code: number, text: string, context: string): ApiError {
    let status: Status | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === "object") status = parsed as Status;
    } catch {
      // Not JSON (a proxy's HTML page, say); keep the text.
    }
    return ApiError.fromStatus(
      status ?? { code, message: text.slice(0, 200) },
      context,
      code,
      status ?? text,
    );
  }

  static fromStatus(
    status: Status,
    context: string,
    code = status.code ?? 500,
    body: Status | string = status,
  ): ApiError {
    const reason = status.reason ?? reasonForCode(code);
    const detail = status.message ?? reason;
    return new ApiError(code, reason, `${context}: ${code} ${reason}: ${detail}`, body);
  }
}

function reasonForCode(code: number): string {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    default:
      return code >= 500 ? "InternalError" : "Unknown";
  }
}

function codeOf(err: unknown): number | undefined {
  return err instanceof ApiError ? err.code : undefined;
}

export const isNotFound = (err: unknown): boolean => codeOf(err) === 404;
/** A 409 that is a resourceVersion conflict, not an AlreadyExists (which is also 409). */
export const isConflict = (err: unknown): boolean =>
  codeOf(err) === 409 && (err as ApiError).reason !== "AlreadyExists";
export const isAlreadyExists = (err: unknown): boolean =>
  codeOf(err) === 409 && (err as ApiError).reason === "AlreadyExists";
/** The resourceVersion asked for is older than what etcd still has: relist. */
export const isGone = (err: unknown): boolean => codeOf(err) === 410;
/**
 * A 410 whose reason is Expired: what a continue token, or a resourceVersion, that etcd compacted away gets
 * (client-go's IsResourceExpired, which looks at the reason alone).
 */
export const isResourceExpired = (err: unknown): boolean =>
  err instanceof ApiError && err.reason === "Expired";
