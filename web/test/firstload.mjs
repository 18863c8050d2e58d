// Measures the console's first load against a running Outpost, each run in
// a fresh browser context (empty cache), in headless Chromium:
//   - sign-in page: navigation start to the sign-in form shown, and the
//     bytes transferred;
//   - map: with a session already in the tab, navigation start to the map
//     drawn (coastlines on screen), and the bytes transferred.
// Usage: OUTPOST_TOKEN=<token> node test/firstload.mjs http://127.0.0.1:19023/ [runs]
import { chromium } from "playwright-core";

const base = process.argv[2];
const runs = Number(process.argv[3] || 10);
const token = process.env.OUTPOST_TOKEN;
if (!base || !token) {
  console.error("usage: OUTPOST_TOKEN=<token> node test/firstload.mjs <base URL> [runs]");
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: process.env.OUTPOST_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

async function measure(withSession, ready) {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  if (withSession) {
    await ctx.addInitScript((t) => sessionStorage.setItem("outpost.session", JSON.stringify({ token: t, name: "bench", kind: "token" })), token);
  }
  const page = await ctx.newPage();
  await page.goto(base, { waitUntil: "commit" });
  await page.waitForSelector(ready);
  const ms = await page.evaluate(() => performance.now());
  const bytes = await page.evaluate(() =>
    performance.getEntries().reduce((n, e) => n + (e.transferSize || 0), 0),
  );
  await ctx.close();
  return { ms, bytes };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const out = {};
for (const [name, session, ready] of [
  ["sign-in page", false, "#login-password"],
  ["map", true, ".leaflet-land-pane path"],
]) {
  const r = [];
  for (let i = 0; i < runs; i++) r.push(await measure(session, ready));
  out[name] = {
    medianMs: Math.round(median(r.map((x) => x.ms))),
    minMs: Math.round(Math.min(...r.map((x) => x.ms))),
    maxMs: Math.round(Math.max(...r.map((x) => x.ms))),
    transferredBytes: median(r.map((x) => x.bytes)),
  };
}
await browser.close();
console.log(JSON.stringify(out, null, 2));
