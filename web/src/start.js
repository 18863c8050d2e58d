// The Start page, an administrator's first page after signing in (operations.md
// "First start"): the addresses clients reach this server at, which port
// serves what and whether it accepts connections, the admin token's file,
// and the next steps. One GET /api/server, repeated every 10 seconds so the
// listeners' state stays current.
import { api } from "./api.js";
import { every, h, section, setChildren, table } from "./ui.js";

// What each listener is for, in the order a person setting up a device
// needs them (the names are GET /api/server's).
const PURPOSES = [
  ["SSL_CoT_service", "CoT over TLS: ATAK, iTAK and WinTAK connect here"],
  ["Enrollment_service", "Certificate enrollment: devices get their certificate here"],
  ["HTTPS_TAK_service", "Client API over HTTPS (missions, data packages)"],
  ["HTTP_TAK_service", "Client API over HTTP"],
  ["TCP_CoT_service", "CoT over TCP, unencrypted"],
  ["REST_API_service", "This console and the management API"],
];

export function mountStart(root) {
  const reach = h("div", { id: "start-reach" });
  const ports = h("div", { id: "start-ports" });
  const token = h("div", { id: "start-token" });
  const code = (s) => h("code", null, s);
  const steps = h(
    "ol",
    { class: "steps", id: "start-steps" },
    h("li", null, "Add a user on the ", h("a", { href: "#/users" }, "System users"), " page, or on the server: ", code("outpost user add NAME"), "."),
    h("li", null, "Invite a device: ", code("outpost invite NAME --qr"), " shows a QR code; scan it in ATAK, iTAK or WinTAK. The device enrolls for its certificate on the enrollment port and connects on CoT over TLS."),
    h("li", null, "Check the server the way a device sees it: ", code("outpost doctor"), " on any machine with the data directory."),
  );
  root.append(section("Connect devices", null, reach, ports), section("Next steps", null, steps), section("Admin token", null, token));

  const stop = every(10000, async () => {
    const s = await api("GET", "api/server");
    const others = s.addresses || [];
    setChildren(
      reach,
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Clients reach this server at"),
        h("dd", null, h("strong", { id: "start-public-host" }, s.publicHost || "—")),
        h("dt", null, "Other addresses"),
        h("dd", { id: "start-addresses" }, others.length ? others.join(", ") : "none"),
      ),
    );
    const byName = new Map(s.services.map((x) => [x.name, x]));
    setChildren(
      ports,
      table(
        ["Port", "What for", "Accepting"],
        PURPOSES.filter(([name]) => byName.get(name)?.enabled).map(([name, what]) => {
          const x = byName.get(name);
          return h(
            "tr",
            { "data-service": name },
            h("td", null, String(x.port)),
            h("td", null, what),
            h("td", null, h("span", { class: `badge ${x.status === "on" ? "ok" : "bad"}` }, x.status)),
          );
        }),
        "Every listener is off.",
      ),
    );
    setChildren(
      token,
      h(
        "p",
        null,
        "The first start wrote the administrator's API token to ",
        h("code", { id: "start-token-file" }, s.adminTokenFile || "admin.token in the data directory"),
        " on the server (readable by the service's user only). Sign in with it here, or make more with ",
        code("outpost token create NAME"),
        ".",
      ),
    );
  });
  return stop;
}
