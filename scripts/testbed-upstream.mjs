// The test bed's upstream binaries (`@switchyard/testbed/upstream`) for the root's scripts, by the package's name:
// what the lab uses to find, pin and build them. One line when the workspace is not built yet.
export async function loadTestbedUpstream() {
  try {
    return await import("@switchyard/testbed/upstream");
  } catch (err) {
    if (err?.code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new Error("the testbed is not built: run npm ci and npm run build first");
  }
}
