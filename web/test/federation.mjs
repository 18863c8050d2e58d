// Drives the console's Federation page in headless Chromium against a
// running Outpost A (started by web/console_federation_browser_test.go with
// a second one, B, that already lets A in). Each step checks what an
// administrator sees; screenshots go to OUTPOST_ARTIFACTS. Exits non-zero
// on the first failure.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = process.env;
const base = env.OUTPOST_URL;
const shots = env.OUTPOST_ARTIFACTS;

function check(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
}

async function adminApi(path) {
  const res = await fetch(base + path, { headers: { Authorization: `Bearer ${env.OUTPOST_TOKEN}`, Accept: "application/json" } });
  check(res.ok, `GET ${path}: ${res.status}`);
  return res.json();
}

const userDir = mkdtempSync(join(tmpdir(), "outpost-chromium-"));
const ctx = await chromium.launchPersistentContext(userDir, {
  executablePath: env.OUTPOST_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1440, height: 900 },
});
let failed = false;
try {
  await run();
} catch (e) {
  failed = true;
  console.error(e && e.stack ? e.stack : e);
  try {
    await ctx.pages()[0].screenshot({ path: join(shots, "federation-failure.png") });
  } catch {
    /* no page */
  }
} finally {
  await ctx.close();
  rmSync(userDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

async function run() {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e}`));
  const row = (name) => page.locator(`#federation-links tr[data-federate="${name}"]`);
  const stateOf = async (name) => (await row(name).locator(".fed-state").textContent()).trim();
  const waitState = async (name, want) => {
    const deadline = Date.now() + 30000;
    for (;;) {
      if ((await row(name).count()) === 1 && (await stateOf(name)) === want) return;
      check(Date.now() < deadline, `federate ${name} never ${want} (now ${(await row(name).count()) ? await stateOf(name) : "absent"})`);
      await page.click("#federation-refresh");
      await page.waitForTimeout(250);
    }
  };

  // Sign in with the admin token; the Federation page is in the bar.
  await page.goto(base);
  await page.waitForSelector("#login-token");
  await page.fill("#login-token input[name=token]", env.OUTPOST_TOKEN);
  await page.click("#login-token button");
  await page.waitForSelector("#nav-federation");
  await page.click("#nav-federation");
  await page.waitForSelector("#federation-fingerprint");
  check((await page.textContent("#federation-fingerprint")) === env.OUTPOST_FED_SELF, "the page shows this server's certificate fingerprint");
  check((await page.textContent("#federation-server-id")).startsWith("outpost-"), "the page shows the server id");
  check((await page.textContent("#federation-listening")).includes("not listening"), "no listener before any federate");
  await page.waitForSelector("#federation-links .empty");
  console.log("step: identity shown, no federate, no listener");

  // Add B: address, CA file, pinned fingerprint.
  await page.fill("#add-federate input[name=name]", "bravo");
  await page.fill("#add-federate input[name=address]", env.OUTPOST_FED_ADDRESS);
  await page.setInputFiles("#add-federate input[name=ca]", env.OUTPOST_FED_CA);
  await page.fill("#add-federate input[name=pin]", env.OUTPOST_FED_PIN.toLowerCase());
  await page.selectOption("#add-federate select[name=protocol]", "v2");
  await page.click("#add-federate button[type=submit]");
  await row("bravo").waitFor();
  await waitState("bravo", "connected");
  check((await row("bravo").textContent()).includes(env.OUTPOST_FED_ADDRESS), "the row shows the address");
  // B's client's position arrives first (the replay of a new link).
  for (const deadline = Date.now() + 30000; (await row("bravo").locator(".last-contact").textContent()) === "never"; ) {
    check(Date.now() < deadline, "the row never shows a last contact");
    await page.click("#federation-refresh");
    await page.waitForTimeout(250);
  }
  check(!(await row("bravo").locator(".events").textContent()).startsWith("0 /"), "the row counts the events received");
  check(/^127\.0\.0\.1:\d+$/.test(await page.textContent("#federation-listening")), "the listener opened with the first trusted federate");
  const stored = (await adminApi("api/federation/federates")).federates;
  check(stored.length === 1 && stored[0].pin === env.OUTPOST_FED_PIN && stored[0].caSubjects.length === 1 && stored[0].protocol === "v2", `stored ${JSON.stringify(stored)}`);
  check((await row("bravo").locator(".protocol").textContent()) === "v2", "the row shows the protocol");
  console.log("step: bravo added with its CA file, pin and protocol, connected");

  // bravo's group mapping: an outbound and an inbound pair of the group
  // Blue (made on A through the API by the Go test), saved, summed up in
  // the row and stored.
  const groupsPath = "api/federation/federates/bravo/groups";
  const summary = async () => (await row("bravo").locator(".groups-summary").textContent()).trim();
  const waitSummary = async (want) => {
    for (const deadline = Date.now() + 30000; (await summary()) !== want; ) {
      check(Date.now() < deadline, `the row's groups never show ${want} (now ${await summary()})`);
      await page.click("#federation-refresh");
      await page.waitForTimeout(250);
    }
  };
  const openGroups = async () => {
    await row("bravo").locator("button.groups-federate").click();
    await page.waitForSelector("#federate-groups-form");
  };
  await waitSummary("__ANON__");
  await openGroups();
  check((await page.locator("#federate-groups-form .group-pair").count()) === 0, "no pair before any mapping");
  check((await page.locator("#federate-groups-announced option[value='*']").count()) === 1, "the inbound suggestions offer *");
  await page.click("#federate-groups-form button.add-outbound");
  const outPair = page.locator("#federate-groups-out .group-pair").last();
  await outPair.locator("select[name=local]").selectOption("Blue");
  await outPair.locator("input[name=federate]").fill("Fed-Blue");
  await page.click("#federate-groups-form button.add-inbound");
  const inPair = page.locator("#federate-groups-in .group-pair").last();
  await inPair.locator("input[name=federate]").fill("Fed-Cyan");
  await inPair.locator("select[name=local]").selectOption("Blue");
  await page.screenshot({ path: join(shots, "federation-groups.png") });
  await page.click("dialog.modal .modal-buttons button.primary");
  await page.waitForSelector("#federate-groups-form", { state: "detached" });
  await waitSummary("Blue→Fed-Blue · Fed-Cyan→Blue");
  const mapped = await adminApi(groupsPath);
  check(
    JSON.stringify(mapped.outbound) === JSON.stringify([{ local: "Blue", federate: "Fed-Blue" }]) &&
      JSON.stringify(mapped.inbound) === JSON.stringify([{ local: "Blue", federate: "Fed-Cyan" }]),
    `stored mapping ${JSON.stringify(mapped)}`,
  );
  await page.screenshot({ path: join(shots, "console-federation.png") });
  console.log("step: bravo's groups: Blue→Fed-Blue out, Fed-Cyan→Blue in, stored");

  // A federate group name of 256 bytes (128 characters: the field takes
  // them) is refused with the server's message; the editor stays open and
  // nothing changes.
  const before = problems.length;
  await openGroups();
  check((await page.locator("#federate-groups-out .group-pair").count()) === 1, "the editor shows the stored outbound pair");
  check((await page.inputValue("#federate-groups-out input[name=federate]")) === "Fed-Blue", "the stored federate group is shown");
  await page.fill("#federate-groups-out input[name=federate]", "é".repeat(128));
  await page.click("dialog.modal .modal-buttons button.primary");
  await page.waitForSelector(".toast.error");
  const refusal = await page.textContent(".toast.error");
  check(refusal.includes("255"), `the refusal gives the limit: ${refusal}`);
  check((await page.locator("#federate-groups-form").count()) === 1, "the editor stays open after a refusal");
  check(JSON.stringify(await adminApi(groupsPath)) === JSON.stringify(mapped), "a refused save changes nothing");
  await page.click("dialog.modal .modal-buttons button:has-text('Cancel')");
  await page.waitForSelector("#federate-groups-form", { state: "detached" });
  await page.evaluate(() => document.querySelectorAll(".toast.error").forEach((t) => t.remove()));
  check(
    problems.slice(before).every((p) => p.includes("status of 400")),
    `console errors: ${problems.slice(before).join(" | ")}`,
  );
  problems.splice(before); // the browser logs the 400 itself
  check((await summary()) === "Blue→Fed-Blue · Fed-Cyan→Blue", "the row keeps the stored mapping");
  console.log("step: a federate group over 255 bytes refused, nothing changed");

  // Clear, after a confirmation: __ANON__ both ways again.
  await openGroups();
  await page.click("dialog.modal .modal-buttons button:has-text('Clear')");
  await page.locator("dialog.modal").last().locator(".modal-buttons button.primary").click();
  await page.waitForSelector("#federate-groups-form", { state: "detached" });
  await waitSummary("__ANON__");
  const cleared = await adminApi(groupsPath);
  check(cleared.outbound.length === 0 && cleared.inbound.length === 0, `cleared mapping ${JSON.stringify(cleared)}`);
  console.log("step: bravo's groups cleared after confirming");

  // Edit the protocol: v1 (B has no v1 listener: the link cannot come up), then v2 again.
  const setProtocol = async (want) => {
    await row("bravo").locator("button.edit-federate").click();
    await page.selectOption("#edit-federate select[name=protocol]", want);
    await page.click("dialog.modal .modal-buttons button.primary");
    await page.waitForSelector("#edit-federate", { state: "detached" });
    for (const deadline = Date.now() + 30000; (await row("bravo").locator(".protocol").textContent()) !== want; ) {
      check(Date.now() < deadline, `the row never shows protocol ${want}`);
      await page.click("#federation-refresh");
      await page.waitForTimeout(250);
    }
    check((await adminApi("api/federation/federates")).federates[0].protocol === want, `stored protocol ${want}`);
  };
  await setProtocol("v1");
  await waitState("bravo", "disconnected");
  await setProtocol("v2");
  await waitState("bravo", "connected");
  console.log("step: bravo's protocol edited to v1 (no link) and back to v2 (connected)");

  // Disable: the link ends, the row stays.
  await row("bravo").locator("button.toggle-federate").click();
  await waitState("bravo", "disabled");
  check((await row("bravo").locator("button.toggle-federate").textContent()) === "Enable", "a disabled federate offers Enable");
  const view = await adminApi("api/federation");
  check(view.federates.find((f) => f.name === "bravo").connected === false, "the API says bravo is not connected");
  console.log("step: bravo disabled");

  // Remove, after a confirmation that can be cancelled.
  await row("bravo").locator("button.remove-federate").click();
  await page.click("dialog.modal .modal-buttons button:not(.primary)");
  check((await row("bravo").count()) === 1, "cancelled: bravo stays");
  await row("bravo").locator("button.remove-federate").click();
  await page.click("dialog.modal .modal-buttons button.primary");
  await row("bravo").waitFor({ state: "detached" });
  await page.waitForSelector("#federation-links .empty");
  console.log("step: bravo removed after confirming");

  check(problems.length === 0, `console errors: ${problems.join(" | ")}`);

  // A bad input is refused with the server's message and changes nothing
  // (the browser logs the 400 itself: the only console error allowed).
  await page.fill("#add-federate input[name=name]", "charlie");
  await page.fill("#add-federate input[name=pin]", "not-a-fingerprint");
  await page.click("#add-federate button[type=submit]");
  await page.waitForSelector(".toast.error");
  check((await page.textContent(".toast.error")).includes("pin"), "the refusal names the pin");
  check((await adminApi("api/federation/federates")).federates.length === 0, "a refused add stores nothing");
  console.log("step: a bad pin refused");

  const others = problems.filter((p) => !p.includes("status of 400"));
  check(others.length === 0, `console errors: ${others.join(" | ")}`);
  console.log("step: no console error");
}
