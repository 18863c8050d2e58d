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
const plainUser = env.OUTPOST_PLAIN_USER; // a system user with the role user, no group, certificates
const adminPages = ["start", "clients", "users", "server", "federation"];
const everyonesPages = ["map", "packages", "missions", "emergencies", "account"];

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

// The management API as the administrator's token sees it, to check what
// the console changed.
async function adminApi(path) {
  const res = await fetch(base + path, { headers: { Authorization: `Bearer ${env.OUTPOST_TOKEN}`, Accept: "application/json" } });
  check(res.ok, `GET ${path}: ${res.status}`);
  return res.json();
}

async function userNamed(name) {
  const res = await adminApi("api/users");
  const u = res.SystemUsers.find((x) => x.username === name);
  check(u, `user ${name} in GET api/users`);
  return u;
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
  check((await page.textContent("#token-hint")).includes("admin.token"), "the sign-in page says where the admin token is");
  await shot("01-sign-in");
  await page.fill("#login-password input[name=username]", env.OUTPOST_USER);
  await page.fill("#login-password input[name=password]", "not the password");
  await page.click("#login-password button");
  await page.waitForSelector(".login .error:not([hidden])");
  check((await page.textContent(".login .error")).includes("Wrong user name or password"), "wrong password message");
  await page.fill("#login-password input[name=password]", env.OUTPOST_PASSWORD);
  await page.click("#login-password button");
  // An administrator lands on Start: where devices reach the server, which
  // port serves what, the admin token's file and the next steps.
  await page.locator("#start-ports tr[data-service]").first().waitFor();
  check((await page.textContent(".who .who-name")) === env.OUTPOST_USER, "signed-in user shown");
  check((await page.textContent("#who-role")) === "admin", "administrator's role shown");
  for (const id of [...adminPages, ...everyonesPages]) check((await page.locator(`#nav-${id}`).count()) === 1, `an administrator sees the ${id} page`);
  check(!(await page.evaluate(() => location.href)).includes(env.OUTPOST_PASSWORD), "no secret in the URL");
  const server = await adminApi("api/server");
  check((await page.textContent("#start-public-host")) === server.publicHost, `Start shows the public host ${server.publicHost}`);
  const others = await page.textContent("#start-addresses");
  check(server.addresses.every((a) => others.includes(a)), `Start shows the other addresses ${server.addresses}: ${others}`);
  for (const s of server.services.filter((x) => x.enabled)) {
    const row = await page.textContent(`#start-ports tr[data-service=${s.name}]`);
    check(row.includes(String(s.port)), `Start shows port ${s.port} of ${s.name}: ${row}`);
  }
  check((await page.textContent("#start-token-file")) === env.OUTPOST_TOKEN_FILE, "Start names the admin token's file");
  check((await page.textContent("#start-steps")).includes("outpost invite NAME --qr"), "Start says what to do next");
  await shot("01b-start");
  await page.click("#nav-map");
  await page.waitForSelector("#map.leaflet-container");
  log("signed in with name and password; Start shows the addresses, ports, token file and next steps");

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
  // Invite a device: the dialog shows ATAK's and iTAK's codes, WinTAK's
  // link and the token once; the ATAK code is saved as drawn on the page
  // (console_browser_test.go reads it back with zbarimg).
  await row.locator("button.invite").click();
  await page.selectOption("#invite-form select[name=expires]", "7d");
  await page.fill("#invite-form input[name=uses]", "2");
  await page.click("dialog.modal button.primary");
  await page.waitForSelector("dialog.modal .invite-codes img.qr", { timeout: 30000 });
  await page.waitForFunction(() => [...document.querySelectorAll("dialog.modal img.qr")].every((i) => i.complete && i.naturalWidth > 0));
  const inviteToken = await page.inputValue("dialog.modal .token-value");
  check(inviteToken.length === 43, `invitation token shown once (${inviteToken.length} characters)`);
  const codeTexts = await page.locator("dialog.modal .code-text").allTextContents();
  check(codeTexts.length === 3 && codeTexts[0].startsWith("tak://com.atakmap.app/enroll?") && codeTexts[0].includes(inviteToken), `ATAK code text ${codeTexts[0]}`);
  check(codeTexts[1].endsWith(",SSL") && !codeTexts[1].includes(inviteToken), `iTAK code text ${codeTexts[1]}`);
  check(codeTexts[2].includes("/Marti/api/tls/enrollment-package?device=wintak") && !codeTexts[2].includes(inviteToken), `WinTAK link ${codeTexts[2]}`);
  await page.locator("dialog.modal figure.invite-code img.qr").first().screenshot({ path: join(shots, "invite-atak-code.png") });
  result.inviteToken = inviteToken;
  await shot("07-invitation");
  await page.click("dialog.modal button.primary");
  const invRow = page.locator("#invitations-list tr[data-state=active]", { hasText: "alpha" });
  await invRow.waitFor();
  check((await invRow.textContent()).includes("2 of 2"), "the invitation is listed with its uses");
  await shot("08-invitations");
  await invRow.locator("button.revoke").click();
  await page.click("dialog.modal button.primary"); // confirm
  await page.locator("#invitations-list tr[data-state=revoked]", { hasText: "alpha" }).waitFor();
  log("invitation created (ATAK and iTAK codes, WinTAK link, token shown once), listed and revoked");
  await row.locator("button", { hasText: "Rotate token" }).click();
  await page.click("dialog.modal button.primary"); // confirm
  await page.waitForSelector("dialog.modal .token-value");
  check((await page.inputValue("dialog.modal .token-value")) !== token, "rotated token differs");
  await page.click("dialog.modal button.primary");
  log(`system user created with certificates; package downloaded (${pkg.length} bytes); token rotated`);

  // 6b. Groups: create one, and delete a throw-away one after the warning
  // that its members lose it and its data is unshared.
  await page.fill("#create-group input[name=name]", "Red");
  await page.fill("#create-group input[name=description]", "Assault team");
  await page.click("#create-group button[type=submit]");
  await page.locator("#groups-list tr[data-group=Red]").waitFor();
  await page.locator("#groups-list tr[data-group=Cyan] td.members", { hasText: "alpha" }).waitFor(); // made by alpha's Groups field
  await page.fill("#create-group input[name=name]", "Spare");
  await page.click("#create-group button[type=submit]");
  const spare = page.locator("#groups-list tr[data-group=Spare]");
  await spare.waitFor();
  check((await page.locator("#groups-list tr[data-group=__ANON__] .delete-group").count()) === 0, "__ANON__ cannot be deleted");
  await spare.locator(".delete-group").click();
  const warning = await page.locator("dialog.modal p").textContent();
  check(warning.includes("unshared") && warning.includes("__ANON__"), `deletion warning: ${warning}`);
  await page.click("dialog.modal button.primary");
  await spare.waitFor({ state: "detached" });
  const groupNames = (await adminApi("api/groups")).groups.map((g) => g.name);
  check(groupNames.includes("Red") && !groupNames.includes("Spare"), `groups on the server: ${groupNames}`);
  log("group Red created, Spare deleted after confirmation; the API agrees");

  // 6c. The plain user's memberships (Red IN, Cyan both ways) and alpha's
  // role, set in the table; the API and, after a reload, the table show them.
  const srow = page.locator(`tr[data-user="${plainUser}"]`);
  check((await srow.locator("select.role-select").inputValue()) === "user", "plain user's role in the table");
  check((await srow.locator(".memberships-text").textContent()) === "__ANON__ (no group)", "plain user starts without a group");
  await srow.locator(".edit-groups").click();
  await page.waitForSelector("#memberships-form");
  await page.click("#memberships-form .add-membership");
  await page.click("#memberships-form .add-membership");
  const ms = page.locator("#memberships-form .membership");
  check((await ms.count()) === 2, "two membership rows");
  await ms.nth(0).locator("select[name=group]").selectOption("Red");
  await ms.nth(0).locator("select[name=direction]").selectOption("IN");
  await ms.nth(1).locator("select[name=group]").selectOption("Cyan");
  await ms.nth(1).locator("select[name=direction]").selectOption("BOTH");
  await shot("06b-membership-editor");
  await page.click("dialog.modal button.primary");
  await srow.locator(".memberships-text", { hasText: "Red (IN)" }).waitFor();
  const scout = await userNamed(plainUser);
  const got = scout.groups.map((g) => `${g.name}:${g.direction}`).sort().join(",");
  check(got === "Cyan:BOTH,Red:IN", `plain user's groups on the server: ${got}`);
  await page.locator("#groups-list tr[data-group=Red] td.members", { hasText: plainUser }).waitFor();
  await page.selectOption("tr[data-user=alpha] select.role-select", "admin");
  await page.locator(".toast", { hasText: "alpha is now an administrator" }).waitFor();
  check((await userNamed("alpha")).role === "admin", "alpha is an administrator on the server");
  await page.reload();
  await page.locator("tr[data-user=alpha] select.role-select").waitFor();
  await srow.locator(".memberships-text", { hasText: /\w/ }).waitFor();
  check((await page.locator("tr[data-user=alpha] select.role-select").inputValue()) === "admin", "alpha's role after a reload");
  const shown = await srow.locator(".memberships-text").textContent();
  check(shown.includes("Red (IN)") && shown.includes("Cyan (BOTH)"), `plain user's groups after a reload: ${shown}`);
  await page.locator("#groups-list tr[data-group=Red]").waitFor();
  await shot("06c-roles-and-groups");
  log("plain user's groups and alpha's role set in the table; the API and the reloaded table show them");

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
  await page.waitForSelector(".who .who-name");
  const tokenOwner = (await adminApi("api/whoami")).name;
  check((await page.textContent(".who .who-name")) === tokenOwner, `the token's API user (${tokenOwner}) shown`);
  check((await page.textContent("#who-role")) === "admin", "an API token is an administrator");
  await page.click("#nav-map");
  await page.locator(".sym.client .sym-label", { hasText: "VIPER-1" }).waitFor();
  log("signed out, then in with an API token");

  // 10. A plain user: no administrator's page in the bar nor by address;
  // My account shows its groups and gives it its own package; its map shows
  // what its groups see (not the anonymous clients of __ANON__).
  await page.click("#sign-out");
  await page.waitForSelector("#login-password");
  await page.fill("#login-password input[name=username]", plainUser);
  await page.fill("#login-password input[name=password]", env.OUTPOST_PLAIN_PASSWORD);
  const userMap = page.waitForResponse((r) => /\/api\/map\?/.test(r.url()) && r.status() === 200);
  await page.click("#login-password button");
  await page.waitForSelector("#map.leaflet-container");
  const seen = (await (await userMap).json()).clients.map((c) => c.uid);
  check(!seen.includes("ANDROID-console-1"), `the user's map lists clients outside its groups: ${seen}`);
  check((await page.textContent(".who .who-name")) === plainUser, "plain user's name shown");
  check((await page.textContent("#who-role")) === "user", "plain user's role shown");
  for (const id of adminPages) check((await page.locator(`#nav-${id}`).count()) === 0, `a user does not see the ${id} page`);
  for (const id of everyonesPages) check((await page.locator(`#nav-${id}`).count()) === 1, `a user sees the ${id} page`);
  for (const id of adminPages) {
    await page.evaluate((id) => (location.hash = `#/${id}`), id);
    await page.waitForFunction(() => location.hash === "#/map");
    await page.waitForSelector("#map.leaflet-container");
    check((await page.locator("#create-user, #server-version, #start-reach").count()) === 0, `#/${id} leads a user to the map`);
  }
  await page.click("#nav-account");
  await page.locator("#account-groups tr[data-group=Red]").waitFor();
  check((await page.textContent("#account-name")) === plainUser, "My account: name");
  check((await page.textContent("#account-role")) === "user", "My account: role");
  const myGroups = (await page.locator("#account-groups tbody tr").evaluateAll((rows) => rows.map((r) => `${r.dataset.group}:${r.querySelector("td.direction").textContent}`))).sort();
  check(myGroups.join(",") === "Cyan:BOTH,Red:IN", `My account: groups ${myGroups}`);
  const [own] = await Promise.all([page.waitForEvent("download"), page.click("#download-own-package")]);
  const ownPath = join(shots, `own-${own.suggestedFilename()}`);
  await own.saveAs(ownPath);
  check(readFileSync(ownPath).subarray(0, 2).toString() === "PK", "the user's own package is a zip");
  await shot("10-user-account");
  // A session the tab kept with a stale role (an administrator's) is put
  // right when the page loads; one kept without a role is asked about first.
  await page.click("#nav-map");
  await page.waitForSelector("#map.leaflet-container");
  const keep = (patch) =>
    page.evaluate((patch) => {
      const s = { ...JSON.parse(sessionStorage.getItem("outpost.session")), ...patch };
      for (const k of Object.keys(s)) if (s[k] === null) delete s[k];
      sessionStorage.setItem("outpost.session", JSON.stringify(s));
    }, patch);
  await keep({ role: "admin", admin: true });
  await page.reload();
  await page.waitForFunction(() => document.querySelector("#who-role")?.textContent === "user" && !document.querySelector("#nav-users"));
  await keep({ role: null, admin: null });
  await page.reload();
  await page.waitForFunction(() => document.querySelector("#who-role")?.textContent === "user");
  check((await page.locator("#nav-server").count()) === 0, "a session kept without a role gets the user's pages");
  await page.click("#nav-packages");
  await page.waitForSelector("#upload-form");
  // The operator's package (shared with every group) is listed for the
  // user, without the controls it may not use.
  const theirs = page.locator("table.grid tr", { hasText: "survey-photos.zip" });
  await theirs.waitFor();
  check((await theirs.locator("button.danger").count()) === 0 && (await theirs.locator("select").count()) === 0,
    "a user is offered no Delete or privacy switch on an administrator's package");
  await page.click("#nav-missions");
  await page.locator("#missions-list").waitFor();
  log("a user sees no administrator's page, is led to the map from their addresses, sees its groups and downloads its own package");

  const csp = problems.filter((p) => /Content Security Policy|Refused to/i.test(p));
  check(csp.length === 0, `CSP violations: ${csp.join(" | ")}`);
  const expected = withGeo ? [] : ["404"];
  const other = problems.filter((p) => !csp.includes(p) && !(expected.length && /status of 404/.test(p)) && !/status of 401/.test(p));
  check(other.length === 0, `console errors: ${other.join(" | ")}`);
  check(offsite.length === 0, `requests left the server: ${offsite.join(", ")}`);
  log("no console error, no CSP violation, no request to anywhere else");
}
