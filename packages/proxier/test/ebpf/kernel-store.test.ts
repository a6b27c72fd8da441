// The renderer's steps through the real kernel maps (the kernel map store over pinned maps): the kernel takes
// every step, and what it holds afterwards, dumped and decoded, is what FakeBPFMaps holds after the same steps.
// Skipped where eBPF programs cannot be loaded (see ../kernel/ebpf-fixture.ts).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { loadSockPrograms, removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { decodeContents, type MapContents } from "../../src/ebpf/contents.js";
import { contentsText, resolvedText } from "../../src/ebpf/contents-text.js";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { renderEBPF } from "../../src/ebpf/render.js";
import { buildMaps } from "../../src/testing/fixtures.js";
import { dualServices, dualSlices } from "../golden-dual.js";
import { ebpfTestsUnavailable, TestCgroup, testPinRoot } from "../kernel/ebpf-fixture.js";
import { ebpfOptions } from "./helpers.js";

const skip = await ebpfTestsUnavailable();
if (skip) console.log(`# skipping the renderer's kernel map test: ${skip}`);

describe("renderEBPF through the kernel's maps", { skip: skip ?? false }, () => {
  let cgroup: TestCgroup | undefined;
  let store: KernelBPFMapStore | undefined;
  const pinRoot = testPinRoot("render");

  before(async () => {
    cgroup = new TestCgroup("render");
    await loadSockPrograms({ cgroupPath: cgroup.path, pinRoot });
    store = await KernelBPFMapStore.open(pinRoot);
  });
  after(async () => {
    store?.close();
    await removeSockPrograms(pinRoot);
    await cgroup?.remove();
  });

  async function kernelContents(family: IPFamily): Promise<MapContents> {
    const s = store as KernelBPFMapStore;
    return decodeContents(family, {
      services: await s.dump(family, "services"),
      backends: await s.dump(family, "backends"),
      revNat: await s.dump(family, "revNat"),
      sourceRange: await s.dump(family, "sourceRange"),
    });
  }

  for (const family of ["IPv4", "IPv6"] as const) {
    test(`${family}: a full sync, then one that drops half the Services, hold what the fake holds`, async () => {
      const services = dualServices(
        (n) => `172.30.0.${n}`,
        (n) => `fd00:172:30::${n}`,
      );
      const fake = new FakeBPFMaps();
      const write = async (steps: MapWriteStep[]) => {
        fake.writeSync(family, steps);
        await (store as KernelBPFMapStore).write(family, steps);
        assert.equal(contentsText(await kernelContents(family)), contentsText(fake.contents(family)));
      };
      const first = renderEBPF(ebpfOptions(family), buildMaps(family, services, dualSlices()));
      await write(first.steps);
      assert.equal((await kernelContents(family)).services.size, first.sizes.services);
      assert.equal((await kernelContents(family)).sourceRanges?.size, 1, "the LPM trie holds the ranges");
      const fewer = services.filter((_, i) => i % 2 === 0);
      const input = buildMaps(family, fewer, dualSlices());
      await write(renderEBPF(ebpfOptions(family), input, first.state).steps);
      const fresh = renderEBPF(ebpfOptions(family), input).state.contents;
      assert.equal(resolvedText(await kernelContents(family)), resolvedText(fresh));
    });
  }
});
