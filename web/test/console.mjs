// Drives the console in headless Chromium against a running Outpost (started
// by web/console_browser_test.go, which passes the addresses and secrets in
// the environment). Every step checks what an operator would see; the
// screenshots go to OUTPOST_ARTIFACTS. Prints "RESULT <json>" at the end and
// exits non-zero on the first failure.
import { chromium } from "playwright-core";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = process.env;
const base = env.OUTPOST_URL; // http://127.0.0.1:port/
const [cotHost, cotPort] = env.OUTPOST_COT.split(":");
const shots = env.OUTPOST_ARTIFACTS;
const withGeo = env.OUTPOST_GEO === "1"; // the /ManageGeoObject and /ManageEmergency routes
const result = { steps: [] };

function log(msg) {
  console.log(`step: ${msg}`);
  result.steps.push(msg);
}

function check(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
}

// A TAK client over TCP, speaking CoT XML as ATAK does on port 8087.
function cotClient() {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(cotPort), cotHost, () => resolve(s));
    s.on("error", reject);
    s.on("data", () => {}); // the relay's events for this client
  });
}

function iso(ms) {
  return new Date(ms).toISOString();
}

function event({ uid, type, lat, lon, callsign, staleIn = 600, detail = "" }) {
  const now = Date.now();
  const contact = callsign ? `<contact callsign="${callsign}" endpoint="*:-1:stcp"/>` : "";
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` +
    `<event version="2.0" uid="${uid}" type="${type}" how="m-g" time="${iso(now)}" start="${iso(now)}" stale="${iso(now + staleIn * 1000)}">` +
    `<point lat="${lat}" lon="${lon}" hae="35" ce="5" le="9999999"/><detail>${contact}${detail}</detail></event>`
  );
}

const userDir = mkdtempSync(join(tmpdir(), "outpost-chromium-"));
const ctx = await chromium.launchPersistentContext(userDir, {
  executablePath: env.OUTPOST_CHROMIUM || "/usr/bin/chromium",
  headless: true,
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
  viewport: { width: 1440, height: 900 },
  acceptDownloads: true,
});
const sockets = [];
let failed = false;
try {
  await run();
} catch (e) {
  failed = true;
  console.error(e && e.stack ? e.stack : e);
  try {
    await ctx.pages()[0].screenshot({ path: join(shots, "failure.png") });
    console.error(`failure screenshot: ${join(shots, "failure.png")}`);
  } catch {
    /* no page */
  }
} finally {
  sockets.forEach((s) => s.destroy());
  await ctx.close();
  rmSync(userDir, { recursive: true, force: true });
}
console.log(`RESULT ${JSON.stringify(result)}`);
process.exit(failed ? 1 : 0);

async function run() {
  const page = ctx.pages()[0] || (await ctx.newPage());
  const problems = [];
  const offsite = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e}`));
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith(base) && !u.startsWith("data:") && !u.startsWith("blob:")) offsite.push(u);
  });
  const shot = async (name) => {
    await page.screenshot({ path: join(shots, `${name}.png`) });
    log(`screenshot ${name}.png`);
  };

  // 1. Sign in with a wrong, then the right password.
  await page.goto(base);
  await page.waitForSelector("#login-password");
  await shot("01-sign-in");
  await page.fill("#login-password input[name=username]", env.OUTPOST_USER);
  await page.fill("#login-password input[name=password]", "not the password");
  await page.click("#login-password button");
  await page.waitForSelector(".login .error:not([hidden])");
  check((await page.textContent(".login .error")).includes("Wrong user name or password"), "wrong password message");
  await page.fill("#login-password input[name=password]", env.OUTPOST_PASSWORD);
  await page.click("#login-password button");
  await page.waitForSelector("#map.leaflet-container");
  check((await page.textContent(".who span")) === env.OUTPOST_USER, "signed-in user shown");
  check(!(await page.evaluate(() => location.href)).includes(env.OUTPOST_PASSWORD), "no secret in the URL");
  log("signed in with name and password");

  // 2. A TAK client connects over TCP and appears on the map at its place.
  const viper = await cotClient();
  sockets.push(viper);
  const t0 = Date.now();
  viper.write(
    event({
      uid: "ANDROID-console-1",
      type: "a-f-G-U-C",
      lat: 48.8566,
      lon: 2.3522,
      callsign: "VIPER-1",
      detail: `<__group name="Cyan" role="Team Lead"/><takv device="Pixel" platform="ATAK-CIV" os="34" version="5.2"/><track course="45" speed="1.2"/>`,
    }),
  );
  await page.locator(".sym.client .sym-label", { hasText: "VIPER-1" }).waitFor({ timeout: 2000 });
  result.clientAppearMs = Date.now() - t0;
  log(`client on the map after ${result.clientAppearMs} ms`);
  check(result.clientAppearMs <= 2000, "client within 2 s");

  // More of a picture: a second client, markers it dropped, a stale one.
  const hawk = await cotClient();
  sockets.push(hawk);
  hawk.write(event({ uid: "ANDROID-console-2", type: "a-f-G-U-C-R", lat: 48.8642, lon: 2.3290, callsign: "HAWK-2", detail: `<__group name="Cyan" role="Team Member"/>` }));
  hawk.write(event({ uid: "Enemy-OP", type: "a-h-G-U-C-I", lat: 48.8702, lon: 2.3601, staleIn: 3600, detail: `<remarks>two vehicles, eastbound</remarks>` }));
  hawk.write(event({ uid: "Unknown-vehicle", type: "a-u-G-E-V-C", lat: 48.8489, lon: 2.3705, staleIn: 3600 }));
  hawk.write(event({ uid: "Neutral-hospital", type: "a-n-G-I-X-H", lat: 48.8530, lon: 2.3400, staleIn: 3600 }));
  hawk.write(event({ uid: "Old-checkpoint", type: "a-h-G", lat: 48.8600, lon: 2.3750, staleIn: -600 }));
  for (const label of ["HAWK-2", "Enemy-OP", "Unknown-vehicle", "Neutral-hospital", "Old-checkpoint"]) {
    await page.locator(".sym .sym-label", { hasText: label }).waitFor({ timeout: 5000 });
  }
  check((await page.locator(".sym.stale .sym-label", { hasText: "Old-checkpoint" }).count()) === 1, "stale item faded");
  check((await page.locator(".sym:not(.stale) .sym-label", { hasText: "Enemy-OP" }).count()) === 1, "live item not faded");
  const img = await page.locator(".sym.client", { hasText: "VIPER-1" }).locator("img").getAttribute("src");
  check(img.startsWith("data:image/svg+xml"), "client drawn as an SVG symbol");
  log("markers, a second client and a stale item drawn");

  // Click: the details say where it is.
  await page.locator(".sym.client", { hasText: "VIPER-1" }).click();
  await page.waitForSelector(".leaflet-popup .details");
  const details = await page.textContent(".leaflet-popup .details");
  check(details.includes("48.85660° N") && details.includes("2.35220° E"), `position in details: ${details}`);
  check(details.includes("Cyan / Team Lead"), "team in details");
  await page.waitForTimeout(400); // the popup fades in
  await shot("02-map-live-zoomed-in");
  await page.click(".leaflet-popup-close-button");
  for (let i = 0; i < 7; i++) {
    await page.click(".leaflet-control-zoom-out");
    await page.waitForTimeout(300);
  }
  await shot("03-map-region-coastlines");
  log("details popup shows the client's position");

  // 3. Clients page lists it.
  await page.click("#nav-clients");
  await page.locator("table.grid td", { hasText: "VIPER-1" }).waitFor();
  log("clients page lists the client");

  // 4. Upload a data package and watch the progress bar (upload throttled
  // to 4 MB/s so the bar is seen moving on loopback).
  await page.click("#nav-packages");
  await page.waitForSelector("#upload-form");
  const big = join(userDir, "survey-photos.zip");
  writeFileSync(big, randomBytes(12 << 20));
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 4 << 20 });
  await page.setInputFiles("#upload-form input[type=file]", big);
  await page.click("#upload-form button[type=submit]");
  await page.waitForFunction(() => {
    const p = document.querySelector("#upload-progress");
    return p && !p.hidden && p.value > 5 && p.value < 95;
  });
  result.progressSeen = await page.evaluate(() => document.querySelector("#upload-progress").value);
  await shot("04-upload-progress");
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
  await page.waitForFunction(() => (document.querySelector("#upload-status") || {}).textContent?.includes("uploaded"), null, { timeout: 60000 });
  check((await page.evaluate(() => document.querySelector("#upload-progress").value)) === 100, "progress at 100");
  await page.locator("table.grid td", { hasText: "survey-photos.zip" }).waitFor();
  log(`data package uploaded; progress bar seen at ${result.progressSeen}%`);

  // 5. Upload the MBTiles file as the basemap; the map loads its tiles.
  await page.setInputFiles("#upload-form input[type=file]", env.OUTPOST_MBTILES);
  await page.check("#upload-form input[name=basemap]");
  await page.click("#upload-form button[type=submit]");
  await page.waitForFunction(() => (document.querySelector("#upload-status") || {}).textContent?.includes("as the basemap"), null, { timeout: 30000 });
  await page.waitForFunction(async () => (await (await fetch("tiles/metadata.json")).json()).basemap, null, { timeout: 15000, polling: 250 });
  const tile = page.waitForResponse((r) => /\/tiles\/\d+\/\d+\/\d+$/.test(r.url()) && r.status() === 200, { timeout: 10000 });
  await page.click("#nav-map");
  const tileRes = await tile;
  check(tileRes.headers()["content-type"] === "image/png", "tile content type");
  await page.waitForSelector(".leaflet-tile-loaded");
  await page.locator(".map-side a[href='tiles/mapsource.xml']").waitFor();
  for (let i = 0; i < 9; i++) {
    await page.click(".leaflet-control-zoom-out");
    await page.waitForTimeout(250);
  }
  await page.waitForTimeout(500);
  await shot("05-map-basemap-tiles");
  log("basemap uploaded as a data package; its tiles load on the map");

  // 6. A system user with certificates: create, download the package, QR, rotate.
  await page.click("#nav-users");
  await page.fill("#create-user input[name=name]", "alpha");
  await page.fill("#create-user input[name=password]", "a long enough password");
  await page.fill("#create-user input[name=group]", "Cyan");
  await page.click("#create-user button[type=submit]");
  await page.waitForSelector("dialog.modal .token-value", { timeout: 30000 });
  const token = await page.inputValue("dialog.modal .token-value");
  check(token.length >= 40, "new user's token shown once");
  await page.click("dialog.modal button.primary");
  const row = page.locator("tr[data-user=alpha]");
  await row.locator(".download-package").waitFor();
  const [dl] = await Promise.all([page.waitForEvent("download"), row.locator(".download-package").click()]);
  const pkgPath = join(shots, dl.suggestedFilename());
  await dl.saveAs(pkgPath);
  const pkg = readFileSync(pkgPath);
  check(pkg.length > 1000 && pkg.subarray(0, 2).toString() === "PK", "connection package is a zip");
  check(dl.suggestedFilename().endsWith(".zip"), `package name ${dl.suggestedFilename()}`);
  result.packageBytes = pkg.length;
  await shot("06-system-users");
  await row.locator("button", { hasText: "QR code" }).click();
  await page.waitForSelector("dialog.modal img.qr");
  await shot("07-package-qr");
  await page.click("dialog.modal button.primary");
  await row.locator("button", { hasText: "Rotate token" }).click();
  await page.click("dialog.modal button.primary"); // confirm
  await page.waitForSelector("dialog.modal .token-value");
  check((await page.inputValue("dialog.modal .token-value")) !== token, "rotated token differs");
  await page.click("dialog.modal button.primary");
  log(`system user created with certificates; package downloaded (${pkg.length} bytes); QR shown; token rotated`);

  // 7. Raise and cancel an emergency from the map.
  if (withGeo) {
    await page.click("#nav-map");
    await page.locator(".sym .sym-label", { hasText: "VIPER-1" }).waitFor();
    await page.click("#raise-emergency");
    const box = await page.locator("#map").boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForSelector("#emergency-form");
    await page.fill("#emergency-form input[name=name]", "Casualty at bridge");
    await page.click("dialog.modal button.primary");
    const em = page.locator(".sym.emergency", { hasText: "Casualty at bridge" });
    await em.waitFor({ timeout: 10000 });
    await shot("08-emergency");
    await em.click();
    await page.click(".leaflet-popup .cancel-emergency");
    await em.waitFor({ state: "detached", timeout: 10000 });
    log("emergency raised and cancelled from the map");

    // Place a repeated geo object, see it on the map and in the list, stop repeating it.
    await page.click("#place-object");
    await page.mouse.click(box.x + box.width / 2 + 260, box.y + box.height / 2 + 170);
    await page.waitForSelector("#geo-form");
    await page.selectOption("#geo-form select[name=geoObject]", "Vehicle");
    await page.selectOption("#geo-form select[name=attitude]", "hostile");
    await page.fill("#geo-form input[name=name]", "Roadblock");
    await page.fill("#geo-form textarea[name=remarks]", "two trucks across the road");
    await page.check("#geo-form input[name=repeat]");
    await page.click("dialog.modal button.primary");
    const obj = page.locator(".sym.item", { hasText: "Roadblock" });
    await obj.waitFor({ timeout: 10000 });
    await page.locator(".map-side li", { hasText: /./ }).locator("button", { hasText: "Stop" }).first().waitFor({ timeout: 10000 });
    await obj.click();
    await page.waitForSelector(".leaflet-popup .details");
    await page.locator(".leaflet-popup .remarks", { hasText: "two trucks across the road" }).waitFor();
    await page.waitForTimeout(400);
    await shot("08b-geo-object");
    await page.click(".leaflet-popup button:has-text('Stop repeating')");
    await page.locator(".map-side p.empty", { hasText: "None." }).waitFor({ timeout: 10000 });
    log("geo object placed from the map (repeated), shown with its remarks, repeat stopped");
  } else {
    log("geo object and emergency routes absent on this server: placing and raising not exercised");
  }

  // 7b. Missions: the mission console_browser_test.go made through the
  // client API, with its file, uid, subscriber, change log and log entry;
  // its markup is shown as text.
  const missionName = env.OUTPOST_MISSION;
  await page.click("#nav-missions");
  const mrow = page.locator("#missions-list tbody tr").filter({ hasText: missionName });
  await mrow.waitFor();
  const cells = await mrow.locator("td").allTextContents();
  check(cells[1] === "public" && cells[2] === "ANDROID-console-1", `mission row: ${cells.join(" | ")}`);
  check(cells.slice(4).join(",") === "1,1,2,1", `files, uids, subscribers, log entries: ${cells.slice(4).join(",")}`);
  await mrow.locator("a").click();
  await page.locator("#mission-files td", { hasText: "route-plan.txt" }).waitFor();
  check((await page.textContent(".page-missions .panel h2")) === `Mission ${missionName}`, "detail heading");
  await page.locator("#mission-uids td", { hasText: "VIPER-1" }).waitFor();
  await page.locator("#mission-subscribers td", { hasText: "ANDROID-console-2" }).waitFor();
  const changes = await page.locator("#mission-changes tbody tr").allTextContents();
  check(changes.length === 4, `change log rows: ${changes.length}`);
  check(changes[0].includes("added log entry") && changes[0].includes("Crossed the bridge"), `newest change first: ${changes[0]}`);
  check(changes[3].includes("created"), `oldest change last: ${changes[3]}`);
  const entry = await page.textContent("#mission-logs td .log-text");
  check(entry === "Crossed the bridge <script>alert(1)</script>, no contact.", `log entry as text: ${entry}`);
  check((await page.locator("#app b, #mission-detail script").count()) === 0, "client text never becomes markup");
  const [mdl] = await Promise.all([page.waitForEvent("download"), page.locator("#mission-files button", { hasText: "Download" }).click()]);
  const mfile = join(shots, mdl.suggestedFilename());
  await mdl.saveAs(mfile);
  check(readFileSync(mfile, "utf8").startsWith("Route plan:"), "mission file downloaded");
  await page.click("#missions-refresh");
  await page.waitForFunction(() => !document.querySelector("#missions-refresh").disabled);
  await page.locator("#mission-files td", { hasText: "route-plan.txt" }).waitFor();
  await page.locator(".toast").last().waitFor({ state: "detached", timeout: 10000 }); // earlier steps' toasts
  await page.evaluate(() => document.querySelector("main").scrollTo(0, 0));
  await shot("08c-missions");
  await page.evaluate(() => document.querySelector("#mission-changes").scrollIntoView());
  await shot("08d-mission-change-log");
  log("missions page lists the mission; its file downloads; uid, subscriber, change log (newest first) and log entry shown as text");

  // 8. Server page: version, listeners, charts, log tail.
  await page.click("#nav-server");
  await page.waitForSelector("#server-version");
  check((await page.textContent("#server-version")).length > 0, "version shown");
  await page.waitForSelector("#log-tail .log");
  await page.waitForFunction(() => document.querySelectorAll(".chart-line").length >= 3, null, { timeout: 15000 });
  await shot("09-server");
  log("server page shows version, listeners, charts and the log");

  // 9. Sign out, sign in again with an API token.
  await page.click("#sign-out");
  await page.waitForSelector("#login-token");
  check((await page.evaluate(() => sessionStorage.length)) === 0, "session storage emptied on sign out");
  await page.fill("#login-token input[name=token]", "not-a-token-of-this-server");
  await page.click("#login-token button");
  await page.waitForSelector(".login .error:not([hidden])");
  await page.fill("#login-token input[name=token]", env.OUTPOST_TOKEN);
  await page.click("#login-token button");
  await page.locator(".who span", { hasText: "API token" }).waitFor();
  await page.click("#nav-map");
  await page.locator(".sym.client .sym-label", { hasText: "VIPER-1" }).waitFor();
  log("signed out, then in with an API token");

  const csp = problems.filter((p) => /Content Security Policy|Refused to/i.test(p));
  check(csp.length === 0, `CSP violations: ${csp.join(" | ")}`);
  const expected = withGeo ? [] : ["404"];
  const other = problems.filter((p) => !csp.includes(p) && !(expected.length && /status of 404/.test(p)) && !/status of 401/.test(p));
  check(other.length === 0, `console errors: ${other.join(" | ")}`);
  check(offsite.length === 0, `requests left the server: ${offsite.join(", ")}`);
  log("no console error, no CSP violation, no request to anywhere else");
}
