// Debian's chromium driven by playwright-core, for the dashboard's page tests: a fresh profile per launch, no
// network beyond the page (--disable-background-networking and friends keep chromium from calling home).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Locator } from "playwright-core";

export const chromiumPath = "/usr/bin/chromium";

/** Why the page cannot be tested in a browser here, or undefined. */
export function browserSkip(): string | undefined {
  if (!existsSync(chromiumPath)) return `no ${chromiumPath} (apt-get install chromium)`;
  return undefined;
}

export async function openBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "dashboard-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * An element's text as the page renders it: table cells apart (innerText puts a tab between them), which the
 * tests' patterns rely on; textContent would run the cells together.
 */
// biome-ignore lint/performance/useDomNodeTextContent: playwright's Locator.innerText, not a DOM node's
export const rendered = (element: Locator) => element.innerText();
