// A federate's group mapping on the Federation page (docs/federation.md
// "Groups"): the short summary of the federates table and the editor of the
// outbound (local group → federate group) and inbound (federate group →
// local group) pairs, read and replaced with GET and PUT
// /api/federation/federates/{name}/groups. Local groups come from GET
// /api/groups, as on the System users page.
import { api } from "./api.js";
import { confirmAction, h, modal, select, setChildren, showError, toast } from "./ui.js";

const ANON = "__ANON__";
const MAX_PAIRS = 64; // each way (federation.md "Groups")
const SHOWN_PAIRS = 3; // of each direction in the table; the rest in the tooltip

/** The summaries the table fetches at most: one GET per federate. */
export const MAX_SUMMARIES = 64;

function groupsPath(name) {
  return `api/federation/federates/${encodeURIComponent(name)}/groups`;
}

/** Reads a federate's mapping: {federate, outbound, inbound, announced}. */
export function federateGroups(name) {
  return api("GET", groupsPath(name));
}

function outText(p) {
  return `${p.local}→${p.federate}`;
}

function inText(p) {
  return `${p.federate === "*" ? "any" : p.federate}→${p.local}`;
}

/**
 * "Blue→Fed-Blue · Fed-Cyan→Blue" (outbound pairs, then inbound), a
 * direction without pairs as __ANON__, or __ANON__ alone for no mapping.
 * Answers {out, in, title}: the pairs shown of each direction (at most
 * SHOWN_PAIRS, then "+N"; in is null for no mapping), title has every pair.
 */
export function mappingSummary(m) {
  const out = m.outbound || [];
  const inb = m.inbound || [];
  if (!out.length && !inb.length) return { out: [ANON], in: null, title: `No mapping: ${ANON} both ways` };
  const part = (pairs, f, dir) => {
    if (!pairs.length) return [`${ANON} ${dir}`];
    const shown = pairs.slice(0, SHOWN_PAIRS).map(f);
    if (pairs.length > SHOWN_PAIRS) shown.push(`+${pairs.length - SHOWN_PAIRS}`);
    return shown;
  };
  const all = (pairs, f) => (pairs.length ? pairs.map(f).join(", ") : ANON);
  return {
    out: part(out, outText, "out"),
    in: part(inb, inText, "in"),
    title: `Outbound: ${all(out, outText)}\nInbound: ${all(inb, inText)}`,
  };
}

/** The summary as one line of text. */
export function summaryText(s) {
  return s.in ? `${s.out.join(", ")} · ${s.in.join(", ")}` : s.out.join(", ");
}

/** A select of the local groups, keeping value even when it is gone. */
function localSelect(groups, value) {
  const options = value && !groups.includes(value) ? [...groups, [value, `${value} (deleted)`]] : groups;
  return select("local", options, value || groups[0]);
}

/**
 * Opens the editor of federate name's group mapping; saved() runs after a
 * change is stored (Save or Clear).
 */
export async function editFederateGroups(name, saved) {
  let mapping, groups;
  try {
    [mapping, groups] = await Promise.all([federateGroups(name), api("GET", "api/groups").then((r) => r.groups.map((g) => g.name))]);
  } catch (e) {
    showError("Groups", e);
    return;
  }
  const announced = h(
    "datalist",
    { id: "federate-groups-announced" },
    h("option", { value: "*" }, "any event of the federate, tagged or not"),
    (mapping.announced || []).map((g) => h("option", { value: g })),
  );
  const outRows = h("div", { class: "group-pairs", id: "federate-groups-out" });
  const inRows = h("div", { class: "group-pairs", id: "federate-groups-in" });
  const outEmpty = h("p", { class: "note" }, `No pair: what ${ANON} carries goes out, as ${ANON}.`);
  const inEmpty = h("p", { class: "note" }, `No pair: what comes in goes to ${ANON}.`);
  const federateInput = (value, list) =>
    h("input", { name: "federate", value: value || "", required: true, maxlength: 255, placeholder: "their group", list, "aria-label": "Federate group" });
  const removeButton = (sync) => h("button", { type: "button", class: "small remove-pair", onclick: (e) => (e.target.closest(".group-pair").remove(), sync()) }, "Remove");

  const sync = () => {
    outEmpty.hidden = outRows.children.length > 0;
    inEmpty.hidden = inRows.children.length > 0;
    addOut.disabled = !groups.length || outRows.children.length >= MAX_PAIRS;
    addIn.disabled = !groups.length || inRows.children.length >= MAX_PAIRS;
  };
  const addOutPair = (p) =>
    outRows.append(h("div", { class: "group-pair" }, localSelect(groups, p.local), h("span", { class: "arrow" }, "→"), federateInput(p.federate), removeButton(sync)));
  const addInPair = (p) =>
    inRows.append(
      h("div", { class: "group-pair" }, federateInput(p.federate, "federate-groups-announced"), h("span", { class: "arrow" }, "→"), localSelect(groups, p.local), removeButton(sync)),
    );
  const addOut = h("button", { type: "button", class: "small add-outbound", onclick: () => (addOutPair({}), sync()) }, "Add an outbound pair");
  const addIn = h("button", { type: "button", class: "small add-inbound", onclick: () => (addInPair({}), sync()) }, "Add an inbound pair");
  (mapping.outbound || []).forEach(addOutPair);
  (mapping.inbound || []).forEach(addInPair);
  sync();

  const pairsOf = (rows) =>
    [...rows.children].map((r) => ({ local: r.querySelector("select[name=local]").value, federate: r.querySelector("input[name=federate]").value.trim() }));
  const put = async (body, what, close) => {
    try {
      const m = await api("PUT", groupsPath(name), body);
      close();
      toast(`Groups of ${name}: ${summaryText(mappingSummary(m))}`);
      saved();
    } catch (e) {
      showError(what, e);
    }
  };
  const announcedText = (mapping.announced || []).length ? mapping.announced.join(", ") : "none yet";
  const form = h(
    "form",
    { id: "federate-groups-form" },
    h("h3", null, "Outbound: local group → federate group"),
    h("p", { class: "note" }, `An event of a local group goes to ${name} tagged with the federate groups of its pairs.`),
    outRows,
    outEmpty,
    h("div", { class: "membership-add" }, addOut),
    h("h3", null, "Inbound: federate group → local group"),
    h("p", { class: "note" }, `An event from ${name} tagged with a federate group goes to the local groups of its pairs (* is any event); one that maps to none is dropped.`),
    inRows,
    inEmpty,
    h("div", { class: "membership-add" }, addIn),
    h("p", { class: "note announced" }, `Federate groups ${name} announced: ${announcedText}.`),
    announced,
  );
  modal(`Groups of ${name}`, form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Clear",
      onclick: async (close) => {
        const text = `Remove every pair of ${name}? It is ${ANON} both ways again: what ${ANON} carries goes out, what comes in goes to ${ANON}.`;
        if (await confirmAction("Clear the group mapping", text, "Clear")) await put({}, "Clear groups", close);
      },
    },
    {
      label: "Save",
      primary: true,
      onclick: (close) => put({ outbound: pairsOf(outRows), inbound: pairsOf(inRows) }, "Save groups", close),
    },
  ]);
}

/** Fills cell with the summary of mapping m (null: it could not be read); a pair is never broken across lines. */
export function showSummary(cell, m) {
  if (!m) {
    setChildren(cell, "—");
    return;
  }
  const s = mappingSummary(m);
  const pairs = (list) => list.flatMap((p, i) => [i ? ", " : null, h("span", { class: "pair" }, p)]);
  cell.title = s.title;
  setChildren(cell, pairs(s.out), s.in ? [" · ", ...pairs(s.in)] : null);
}
