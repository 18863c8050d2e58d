// The console's shell: sign-in, the page bar and the hash router
// (#/map, #/clients, #/users, #/packages, #/missions, #/emergencies,
// #/server).
import "leaflet/dist/leaflet.css";
import "./style.css";
import { currentSession, onSession, signOut } from "./api.js";
import { mountClients } from "./clients.js";
import { mountEmergencies } from "./emergencies.js";
import { mountLogin } from "./login.js";
import { mountMap } from "./map.js";
import { mountMissions } from "./missions.js";
import { mountPackages } from "./packages.js";
import { mountServer } from "./server.js";
import { h, setChildren } from "./ui.js";
import { mountUsers } from "./users.js";

const PAGES = [
  ["map", "Map", mountMap],
  ["clients", "Clients", mountClients],
  ["users", "System users", mountUsers],
  ["packages", "Data packages", mountPackages],
  ["missions", "Missions", mountMissions],
  ["emergencies", "Emergencies", mountEmergencies],
  ["server", "Server", mountServer],
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
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const page = PAGES.find(([id]) => id === path) || PAGES[0];
  const main = h("main", { class: `page page-${page[0]}` });
  const nav = h(
    "nav",
    { class: "topbar" },
    h("a", { class: "brand", href: "#/map" }, "Outpost"),
    h(
      "ul",
      null,
      PAGES.map(([id, title]) => h("li", null, h("a", { href: `#/${id}`, class: id === page[0] ? "active" : "", id: `nav-${id}` }, title))),
    ),
    h(
      "div",
      { class: "who" },
      h("span", null, session.name),
      h("button", { type: "button", id: "sign-out", onclick: () => signOut() }, "Sign out"),
    ),
  );
  setChildren(app, nav, main);
  document.title = `Outpost — ${page[1]}`;
  unmount = page[2](main, new URLSearchParams(query || "")) || (() => {});
}

onSession((s, reason) => route(reason));
window.addEventListener("hashchange", () => route());
route();
