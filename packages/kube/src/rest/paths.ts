import { apiVersionOf, type ResourceDescriptor } from "./resources.js";

/** The URL path of a collection or, with `name`, of one object. */
export function resourcePath(res: ResourceDescriptor, namespace?: string, name?: string): string {
  const root = res.group === "" ? "/api/v1" : `/apis/${apiVersionOf(res)}`;
  const nsPart = res.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const namePart = name === undefined ? "" : `/${encodeURIComponent(name)}`;
  return `${root}${nsPart}/${res.resource}${namePart}`;
}

/** A query string from defined values only; "" when there are none. */
export function queryString(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
