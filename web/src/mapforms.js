// The map's popups and forms: details of a clicked item, placing a geo
// object (POST /ManageGeoObject/postGeoObject) and raising an emergency
// (POST /ManageEmergency/postEmergency), api.md §4.1.
import { api } from "./api.js";
import { affiliationName, ATTITUDES, EMERGENCY_TYPES, GEO_OBJECTS, sidcFor } from "./symbols.js";
import { ago, field, formatLatLon, h, modal, select, showError, toast } from "./ui.js";

/** The popup of a map entry (client, item or emergency). */
export function detailsPopup(v, actions) {
  const d = v.data;
  const rows = [];
  const row = (k, val) => {
    if (val !== null && val !== undefined && val !== "") rows.push(h("tr", null, h("th", null, k), h("td", null, val)));
  };
  row("UID", h("span", { class: "mono" }, d.uid));
  if (v.kind === "emergency") {
    row("Emergency", d.type);
    row("Name", d.name);
  } else {
    row("Type", `${v.type}${affiliationName(v.type) ? ` (${affiliationName(v.type)})` : ""}`);
    const sidc = sidcFor(v.type);
    if (sidc) row("2525C", h("span", { class: "mono" }, sidc));
  }
  row("Position", formatLatLon(v.lat, v.lon));
  if (d.hae !== null && d.hae !== undefined) row("Altitude", `${Math.round(d.hae)} m HAE`);
  if (d.course !== null && d.course !== undefined) row("Course / speed", `${Math.round(d.course)}° / ${(d.speed || 0).toFixed(1)} m/s`);
  if (v.kind === "client") {
    row("Team / role", [d.team, d.role].filter(Boolean).join(" / "));
    row("Address", `${d.address} (${d.listener}${d.user ? `, certificate ${d.user}` : ""})`);
    row("Last seen", ago(d.lastSeen));
  } else if (v.kind === "item") {
    row("How", d.how);
    row("Received", ago(d.received));
    row("Source", d.source);
  }
  if (d.stale) row("Stale", `${ago(d.stale)}${v.stale ? " (stale)" : ""}`);
  if (d.deleted) row("Deleted", "a client deleted it");
  const remarks = h("p", { class: "remarks" });
  const buttons = h("div", { class: "popup-buttons" });
  if (v.kind === "emergency" || actions.isEmergency(d.uid)) {
    buttons.append(
      h(
        "button",
        {
          type: "button",
          class: "danger small cancel-emergency",
          onclick: () => actions.cancelEmergency(d.uid).then(() => toast("Emergency cancelled"), (e) => showError("Cancel emergency", e)),
        },
        "Cancel emergency",
      ),
    );
  }
  if (actions.isRepeated(d.uid)) {
    buttons.append(
      h("button", { type: "button", class: "small", onclick: () => actions.stopRepeating(d.uid).then(() => toast("No longer repeated"), (e) => showError("Stop repeating", e)) }, "Stop repeating"),
    );
  }
  if (v.kind === "item") {
    actions
      .eventOf(d.uid)
      .then((ev) => {
        if (ev.remarks) remarks.textContent = ev.remarks;
      })
      .catch(() => {});
  }
  return h("div", { class: "details" }, h("h3", null, v.label), h("table", { class: "kv" }, h("tbody", null, rows)), remarks, buttons);
}

function numberInput(name, value, step, min, max) {
  return h("input", { name, type: "number", value, step, min, max, required: true });
}

function read(form) {
  return Object.fromEntries(new FormData(form).entries());
}

/** The form placing a geo object at latlng; done() runs after success. */
export function geoObjectForm(latlng, done) {
  const form = h(
    "form",
    { class: "form", id: "geo-form" },
    field("Object", select("geoObject", GEO_OBJECTS.map(([n]) => n), "Ground")),
    field("Attitude", select("attitude", ATTITUDES, "hostile")),
    field("Name", h("input", { name: "name", maxlength: 100, placeholder: "callsign or label" })),
    h(
      "div",
      { class: "row" },
      field("Latitude", numberInput("latitude", latlng.lat.toFixed(6), "any", -90, 90)),
      field("Longitude", numberInput("longitude", wrap(latlng.lng).toFixed(6), "any", -180, 180)),
    ),
    field("How", select("how", ["human", "gps", "retyped", "machine", "mensurated", "estimated", "nonCoT", "gigo"], "human")),
    field("Stale after (seconds)", numberInput("timeout", "3600", "1", 0, 31536000), "0: never stale"),
    field("Remarks", h("textarea", { name: "remarks", rows: 2, maxlength: 2000 })),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "repeat" }), "Repeat (re-broadcast and send to clients that connect later)"),
  );
  modal("Place object", form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Place",
      primary: true,
      onclick: async (close) => {
        if (!form.reportValidity()) return;
        const f = read(form);
        const body = {
          geoObject: f.geoObject,
          attitude: f.attitude,
          latitude: Number(f.latitude),
          longitude: Number(f.longitude),
          how: f.how,
          name: f.name,
          timeout: Number(f.timeout),
          remarks: f.remarks,
          repeat: f.repeat === "on",
        };
        try {
          const res = await api("POST", "ManageGeoObject/postGeoObject", body);
          close();
          toast(`Object placed (${res.message})`);
          done();
        } catch (e) {
          showError("Place object", e);
        }
      },
    },
  ]);
}

/** The form raising an emergency at latlng. */
export function emergencyForm(latlng, done) {
  const form = h(
    "form",
    { class: "form", id: "emergency-form" },
    field("Emergency", select("emergencyType", EMERGENCY_TYPES.map(([n]) => n), "911 Alert")),
    field("Name", h("input", { name: "name", maxlength: 100, placeholder: "who or what", required: true })),
    h(
      "div",
      { class: "row" },
      field("Latitude", numberInput("latitude", latlng.lat.toFixed(6), "any", -90, 90)),
      field("Longitude", numberInput("longitude", wrap(latlng.lng).toFixed(6), "any", -180, 180)),
    ),
    field("Remarks", h("textarea", { name: "remarks", rows: 2, maxlength: 2000 })),
  );
  modal("Raise emergency", form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Raise",
      primary: true,
      onclick: async (close) => {
        if (!form.reportValidity()) return;
        const f = read(form);
        try {
          const res = await api("POST", "ManageEmergency/postEmergency", {
            emergencyType: f.emergencyType,
            latitude: Number(f.latitude),
            longitude: Number(f.longitude),
            name: f.name,
            remarks: f.remarks,
          });
          close();
          toast(`Emergency raised (${res.message})`);
          done();
        } catch (e) {
          showError("Raise emergency", e);
        }
      },
    },
  ]);
}

function wrap(lon) {
  return ((((lon + 180) % 360) + 360) % 360) - 180;
}
