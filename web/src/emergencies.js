// The Emergencies page: the active emergencies (GET
// /ManageEmergency/getEmergency), raising one at given coordinates and
// cancelling (DELETE /ManageEmergency/deleteEmergency), api.md §4.1.
import { api } from "./api.js";
import { emergencyForm } from "./mapforms.js";
import { every, field, formatLatLon, h, section, setChildren, showError, table, toast } from "./ui.js";

export function mountEmergencies(root) {
  const list = h("div");
  const lat = h("input", { type: "number", step: "any", min: -90, max: 90, required: true, name: "lat" });
  const lon = h("input", { type: "number", step: "any", min: -180, max: 180, required: true, name: "lon" });
  const raise = h(
    "form",
    {
      class: "form inline",
      onsubmit: (e) => {
        e.preventDefault();
        emergencyForm({ lat: Number(lat.value), lng: Number(lon.value) }, () => load());
      },
    },
    field("Latitude", lat),
    field("Longitude", lon),
    h("button", { type: "submit", class: "danger" }, "Raise emergency…"),
  );
  root.append(
    section("Active emergencies", [h("button", { type: "button", onclick: () => load() }, "Refresh")], list),
    section("Raise an emergency", null, h("p", { class: "note" }, "Or click on the map with Raise emergency."), raise),
  );

  async function load() {
    let res;
    try {
      res = await api("GET", "ManageEmergency/getEmergency");
    } catch (e) {
      if (e.status === 404 || e.status === 405) {
        setChildren(list, h("p", { class: "note" }, "This server has no emergency routes."));
        return;
      }
      throw e;
    }
    const rows = (res.json_list || []).map((em) =>
      h(
        "tr",
        { dataset: { uid: em.uid } },
        h("td", null, em.type),
        h("td", null, em.name || "—"),
        h("td", null, h("a", { href: `#/map?focus=${encodeURIComponent(em.uid)}` }, formatLatLon(em.lat, em.lon))),
        h("td", null, h("span", { class: "mono" }, em.uid)),
        h("td", null, h("button", { type: "button", class: "small danger cancel-emergency", onclick: () => cancel(em) }, "Cancel")),
      ),
    );
    setChildren(list, table(["Type", "Name", "Position", "UID", ""], rows, "No active emergency."));
  }

  async function cancel(em) {
    try {
      await api("DELETE", "ManageEmergency/deleteEmergency", { uid: em.uid });
      toast(`Emergency ${em.name || em.uid} cancelled`);
      load();
    } catch (e) {
      showError("Cancel emergency", e);
    }
  }

  return every(5000, load);
}
