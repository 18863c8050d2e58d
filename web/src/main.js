// The console's shell: sign-in, the page bar and the hash router
// (#/start, #/map, #/clients, #/users, #/packages, #/missions, #/emergencies,
// #/server, #/federation, #/account). Pages marked admin are for administrators only
// (access.md "Roles"): a user neither sees them in the bar nor reaches
// them by their address, which leads to the map instead.
import "leaflet/dist/leaflet.css";
import "./style.css";
import { mountAccount } from "./account.js";
import { currentSession, isAdmin, onSession, refreshSession, signOut } from "./api.js";
import { mountClients } from "./clients.js";
import { mountDiskBanner } from "./diskbanner.js";
import { mountEmergencies } from "./emergencies.js";
import { mountFederation } from "./federation.js";
import { mountLogin } from "./login.js";
import { mountMap } from "./map.js";
import { mountMissions } from "./missions.js";
import { mountPackages } from "./packages.js";
import { mountServer } from "./server.js";
import { mountStart } from "./start.js";
import { h, setChildren } from "./ui.js";
import { mountUsers } from "./users.js";

// The first page a role may see is where it lands: an administrator on
// Start (how devices connect, the next steps), a user on the map.
const PAGES = [
  { id: "start", title: "Start", mount: mountStart, admin: true },
  { id: "map", title: "Map", mount: mountMap },
  { id: "clients", title: "Clients", mount: mountClients, admin: true },
  { id: "users", title: "System users", mount: mountUsers, admin: true },
  { id: "packages", title: "Data packages", mount: mountPackages },
  { id: "missions", title: "Missions", mount: mountMissions },
  { id: "emergencies", title: "Emergencies", mount: mountEmergencies },
  { id: "server", title: "Server", mount: mountServer, admin: true },
  { id: "federation", title: "Federation", mount: mountFederation, admin: true },
  { id: "account", title: "My account", mount: mountAccount },
];

const app = document.getElementById("app");
let unmount = () => {};

function route(reason) {
  unmount();
  unmount = () => {};
  const session = currentSession();
  if (!session) {
    setChildren(app);
    unmount = mountLogin(app, reason);
    document.title = "Outpost — sign in";
    return;
  }
  const pages = PAGES.filter((p) => !p.admin || isAdmin());
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  let page = pages.find((p) => p.id === path);
  if (!page) {
    page = pages[0];
    if (path) history.replaceState(null, "", `#/${page.id}`); // an unknown page, or one the role may not see
  }
  const main = h("main", { class: `page page-${page.id}` });
  const nav = h(
    "nav",
    { class: "topbar" },
    h("a", { class: "brand", href: "#/map" }, "Outpost"),
    h(
      "ul",
      null,
      pages.map((p) => h("li", null, h("a", { href: `#/${p.id}`, class: p.id === page.id ? "active" : "", id: `nav-${p.id}` }, p.title))),
    ),
    h(
      "div",
      { class: "who" },
      h("span", { class: "who-name" }, session.name),
      h("span", { class: `badge role role-${session.role}`, id: "who-role", title: session.kind }, session.role || "?"),
      h("button", { type: "button", id: "sign-out", onclick: () => signOut() }, "Sign out"),
    ),
  );
  // Administrators see the disk banner on every page (GET /api/server is
  // theirs only).
  const banner = h("div", { class: "banner-slot" });
  setChildren(app, nav, banner, main);
  document.title = `Outpost — ${page.title}`;
  const unmountPage = page.mount(main, new URLSearchParams(query || "")) || (() => {});
  const unmountBanner = isAdmin() ? mountDiskBanner(banner) : () => {};
  unmount = () => {
    unmountBanner();
    unmountPage();
  };
}

onSession((s, reason) => route(reason));
window.addEventListener("hashchange", () => route());
if (currentSession() && typeof currentSession().role !== "string") {
  // A session kept without a role (an older console's): ask who it is
  // before showing any page; signing in with the answer routes.
  refreshSession().catch((e) => {
    console.warn(e);
    if (currentSession()) route();
  });
} else {
  route();
  // A session kept from before this page loaded may have changed role since.
  refreshSession().catch((e) => console.warn(e));
}
