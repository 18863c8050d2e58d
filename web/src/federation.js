// The Federation page, for administrators (docs/federation.md "The
// console's Federation page"): this server's federation identity (what the
// other side's administrator trusts and pins), each federate's link state
// and counters (GET /api/federation, every 5 seconds), and the managed
// federates: add (name, address, protocol, CA file, pin), replace the CA, enable or
// disable, edit, remove (GET, POST, PATCH, PUT …/trust, DELETE under
// /api/federation/federates); every federate's group mapping, summed up in
// its row and edited in federationgroups.js.
import { api } from "./api.js";
import { editFederateGroups, federateGroups, MAX_SUMMARIES, showSummary } from "./federationgroups.js";
import { ago, confirmAction, every, field, h, modal, section, select, setChildren, showError, table, toast } from "./ui.js";

const MAX_CA_BYTES = 64 * 1024; // what the server takes (federation.md "Managing federates")

// The protocols of a managed federate's outbound link (federation.md "Federates one by one").
const PROTOCOLS = [
  ["v2", "Federation v2 (gRPC, port 9001)"],
  ["v1", "Federation v1 (legacy, port 9000)"],
];

export function mountFederation(root) {
  const identity = h("div", { id: "federation-identity" });
  const links = h("div", { id: "federation-links" });
  const form = addForm(() => refresh());
  root.append(
    section("This server", null, h("p", { class: "note" }, "Give these to a federate's administrator: they trust this server's certificate (its CA) and may pin its fingerprint."), identity),
    section(
      "Federates",
      [h("button", { type: "button", id: "federation-refresh", onclick: () => refresh() }, "Refresh")],
      links,
    ),
    section("Add a federate", null, form),
  );

  let managed = new Map(); // name → the stored managed federate

  async function refresh() {
    const [view, stored] = await Promise.all([api("GET", "api/federation"), api("GET", "api/federation/federates").catch(() => ({ federates: [] }))]);
    managed = new Map(stored.federates.map((f) => [f.name, f]));
    showIdentity(identity, view);
    const federates = view.federates || [];
    // One GET per federate for its mapping's summary, for a page of at most MAX_SUMMARIES.
    const mappings =
      federates.length <= MAX_SUMMARIES ? await Promise.all(federates.map((f) => federateGroups(f.name).catch(() => null))) : federates.map(() => undefined);
    const rows = federates.map((f, i) => federateRow(f, managed.get(f.name), mappings[i], refresh));
    setChildren(
      links,
      table(
        ["Federate", "Source", "Address", "Protocol", "State", "Last contact", "In / out", "Drops", "Queued / sent", "Reconnects", "Last error", "Groups", ""],
        rows,
        view.enabled ? "No federate yet: add one below, or list it in the configuration." : "Federation is off (federationPort is -1).",
      ),
    );
  }

  const stop = every(5000, refresh);
  return stop;
}

function showIdentity(el, view) {
  if (!view.enabled) {
    setChildren(el, h("p", { class: "empty" }, "Federation is off: federationPort is -1."));
    return;
  }
  const id = view.identity || {};
  let listening = view.listening || "not listening: no CA is trusted yet (add a federate with its CA)";
  if (view.listenError) listening = `not listening: ${view.listenError}`;
  setChildren(
    el,
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Name"),
      h("dd", { id: "federation-name" }, id.name || "—"),
      h("dt", null, "Server id"),
      h("dd", { id: "federation-server-id" }, id.serverId || "—"),
      h("dt", null, "Certificate"),
      h("dd", { id: "federation-subject" }, id.subject || "—"),
      h("dt", null, "Issued by"),
      h("dd", null, id.issuer || "—"),
      h("dt", null, "SHA-256 fingerprint"),
      h("dd", null, h("code", { id: "federation-fingerprint", class: "fingerprint" }, id.fingerprint || "—")),
      h("dt", null, "Listener"),
      h("dd", { id: "federation-listening" }, listening),
    ),
  );
}

function stateBadge(state) {
  const kind = state === "connected" ? "ok" : state === "disabled" ? "off" : "bad";
  return h("span", { class: `badge ${kind} fed-state` }, state);
}

function drops(f) {
  const n =
    f.droppedQueue + f.droppedLoop + f.droppedHops + f.droppedDuplicate + f.droppedMalformed + f.droppedSize + f.droppedContacts + f.droppedQueued;
  const parts = [
    ["queue full", f.droppedQueue],
    ["loop", f.droppedLoop],
    ["hops", f.droppedHops],
    ["duplicate", f.droppedDuplicate],
    ["malformed", f.droppedMalformed],
    ["too large", f.droppedSize],
    ["contacts", f.droppedContacts],
    ["queue expired", f.droppedQueued],
  ]
    .filter(([, v]) => v)
    .map(([k, v]) => `${k} ${v}`);
  return h("span", { title: parts.join(", ") || "none" }, String(n));
}

/** The Groups cell: the mapping's summary (mapping undefined: not fetched, too many federates). */
function groupsCell(mapping) {
  const cell = h("td", { class: "groups-summary" });
  if (mapping === undefined) cell.append(h("small", { class: "note" }, "see Groups"));
  else showSummary(cell, mapping);
  return cell;
}

function federateRow(f, stored, mapping, reload) {
  const isManaged = f.source === "managed" && stored;
  const contact = f.lastContact ? ago(new Date(f.lastContact * 1000).toISOString()) : "never";
  const address = f.address || (f.source === "inbound" || (stored && stored.inboundOnly) ? "(connects here)" : "—");
  return h(
    "tr",
    { dataset: { federate: f.name } },
    h("td", null, f.name, stored && stored.pin ? h("small", { class: "note", title: stored.pin }, " pinned") : null),
    h("td", null, f.source),
    h("td", null, address),
    h("td", { class: "protocol" }, stored && !stored.inboundOnly ? stored.protocol : "—"),
    h("td", null, stateBadge(f.state)),
    h("td", { class: "last-contact" }, contact),
    h("td", { class: "num events" }, `${f.eventsIn} / ${f.eventsOut}`),
    h("td", { class: "num" }, drops(f)),
    h("td", { class: "num" }, `${f.queued} / ${f.queueSent}`),
    h("td", { class: "num" }, String(f.reconnects)),
    h("td", { class: "last-error" }, f.lastError || "—"),
    groupsCell(mapping),
    h(
      "td",
      null,
      h(
        "div",
        { class: "row-actions" },
        h("button", { type: "button", class: "small groups-federate", onclick: () => editFederateGroups(f.name, reload) }, "Groups"),
        isManaged
          ? [
              h(
              "button",
              { type: "button", class: "small toggle-federate", onclick: () => setEnabled(stored, !stored.enabled, reload) },
              stored.enabled ? "Disable" : "Enable",
            ),
            h("button", { type: "button", class: "small edit-federate", onclick: () => edit(stored, reload) }, "Edit"),
            h("button", { type: "button", class: "small trust-federate", onclick: () => replaceCA(stored, reload) }, "Replace CA"),
            h("button", { type: "button", class: "small danger remove-federate", onclick: () => remove(stored, reload) }, "Remove"),
            ]
          : h("small", { class: "note" }, f.source === "config" ? "configuration file" : ""),
      ),
    ),
  );
}

async function setEnabled(f, enabled, reload) {
  try {
    await api("PATCH", `api/federation/federates/${encodeURIComponent(f.name)}`, { enabled });
    toast(`Federate ${f.name} ${enabled ? "enabled" : "disabled"}`);
    reload();
  } catch (e) {
    showError(enabled ? "Enable federate" : "Disable federate", e);
  }
}

async function remove(f, reload) {
  const text = `Remove the federate ${f.name}? Its link ends, its CA is no longer trusted and what is queued for it is deleted.`;
  if (!(await confirmAction("Remove federate", text, "Remove federate"))) return;
  try {
    await api("DELETE", `api/federation/federates/${encodeURIComponent(f.name)}`);
    toast(`Federate ${f.name} removed`);
    reload();
  } catch (e) {
    showError("Remove federate", e);
  }
}

/** Reads a CA file chosen in input (a PEM text of at most 64 KiB). */
async function readCA(input) {
  const file = input.files && input.files[0];
  if (!file) return "";
  if (file.size > MAX_CA_BYTES) throw new Error(`the CA file is larger than ${MAX_CA_BYTES / 1024} KiB`);
  return file.text();
}

function replaceCA(f, reload) {
  const input = h("input", { type: "file", name: "ca", accept: ".pem,.crt,.cer,text/plain", required: true });
  const form = h("form", { id: "trust-form" }, field("CA certificates (PEM)", input, `What ${f.name}'s certificate must chain to. Now: ${f.caSubjects.join("; ") || "none"}.`));
  modal(`CA of ${f.name}`, form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Replace CA",
      primary: true,
      onclick: async (close) => {
        try {
          const ca = await readCA(input);
          if (!ca) throw new Error("choose a PEM file");
          await api("PUT", `api/federation/federates/${encodeURIComponent(f.name)}/trust`, { ca });
          close();
          toast(`CA of ${f.name} replaced`);
          reload();
        } catch (e) {
          showError("Replace CA", e);
        }
      },
    },
  ]);
}

function edit(f, reload) {
  const form = h(
    "form",
    { class: "form", id: "edit-federate" },
    field("Address", h("input", { name: "address", value: f.address, maxlength: 255, placeholder: "host:9001" }), "Where to connect to; empty: it connects here."),
    field("Protocol", select("protocol", PROTOCOLS, f.protocol), "What its outbound link speaks."),
    field("Pinned SHA-256 fingerprint", h("input", { name: "pin", value: f.pin, maxlength: 95 }), "Empty: any certificate of its CA."),
    h(
      "div",
      { class: "row" },
      field("Reconnect after", h("input", { name: "backoffMin", value: f.backoffMin, maxlength: 32, placeholder: "1s" })),
      field("at most", h("input", { name: "backoffMax", value: f.backoffMax, maxlength: 32, placeholder: "1m" })),
    ),
  );
  modal(`Federate ${f.name}`, form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Save",
      primary: true,
      onclick: async (close) => {
        const d = new FormData(form);
        const body = {};
        for (const k of ["address", "protocol", "pin", "backoffMin", "backoffMax"]) {
          const v = d.get(k).trim();
          if (v !== (f[k] || "")) body[k] = v;
        }
        if (!Object.keys(body).length) {
          close();
          return;
        }
        try {
          await api("PATCH", `api/federation/federates/${encodeURIComponent(f.name)}`, body);
          close();
          toast(`Federate ${f.name} saved`);
          reload();
        } catch (e) {
          showError("Edit federate", e);
        }
      },
    },
  ]);
}

function addForm(reload) {
  const caInput = h("input", { type: "file", name: "ca", accept: ".pem,.crt,.cer,text/plain" });
  const form = h(
    "form",
    {
      class: "form",
      id: "add-federate",
      onsubmit: async (e) => {
        e.preventDefault();
        const d = new FormData(form);
        const button = form.querySelector("button[type=submit]");
        button.disabled = true;
        try {
          const body = { name: d.get("name").trim(), address: d.get("address").trim(), protocol: d.get("protocol"), enabled: d.get("enabled") === "on" };
          const ca = await readCA(caInput);
          if (ca) body.ca = ca;
          const pin = d.get("pin").trim();
          if (pin) body.pin = pin;
          const f = await api("POST", "api/federation/federates", body);
          form.reset();
          toast(`Federate ${f.name} added${f.caSubjects.length ? "" : " (no CA yet: it cannot connect)"}`);
          reload();
        } catch (err) {
          showError("Add federate", err);
        } finally {
          button.disabled = false;
        }
      },
    },
    h(
      "div",
      { class: "row" },
      field("Name", h("input", { name: "name", required: true, maxlength: 64, pattern: "[^ =,\\/]+", title: "no spaces, '=', ',' or '/'", placeholder: "battalion" })),
      field("Address", h("input", { name: "address", maxlength: 255, placeholder: "tak.example.org:9001" }), "Empty: it connects here."),
      field("Protocol", select("protocol", PROTOCOLS, "v2"), "What its outbound link speaks."),
    ),
    h(
      "div",
      { class: "row" },
      field("CA certificates (PEM file)", caInput, "Its certificate must chain to them; nothing else gets in."),
      field("Pinned SHA-256 fingerprint", h("input", { name: "pin", maxlength: 95, placeholder: "optional" }), "Only the certificate with this fingerprint."),
    ),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "enabled", checked: true }), " Enabled"),
    h("div", null, h("button", { type: "submit", class: "primary" }, "Add federate")),
  );
  return form;
}
