// YAML files that are not manifests (golden files, Lists) for tests that compare with them.
import { readFileSync } from "node:fs";
import yaml from "js-yaml";

/** Every document of a YAML file, parsed, with empty documents left out. */
export function readYamlDocuments(path: string): unknown[] {
  return yaml.loadAll(readFileSync(path, "utf8")).filter((doc) => doc !== null && doc !== undefined);
}
