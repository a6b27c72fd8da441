// A node:test reporter that writes one line per test file, "SECONDS<TAB>PATH", in the order the files finished.
// test-all runs the files one at a time, so the time between two files' summaries is the later file's own (its
// process start, hooks and tests); test-all prints the slowest, so a suite that grows shows in every run's log.
export default async function* fileTimes(source) {
  let previous = Date.now();
  for await (const event of source) {
    if (event.type !== "test:summary" || !event.data.file) continue;
    const now = Date.now();
    yield `${((now - previous) / 1000).toFixed(1)}\t${event.data.file}\n`;
    previous = now;
  }
}
