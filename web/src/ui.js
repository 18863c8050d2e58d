// Small DOM helpers. Every text from the server (callsigns, names,
// remarks, log lines) goes in as textContent, never as HTML.

/**
 * h("div", {class: "x", onclick: f}, child, "text", ...) builds an element.
 * Attributes starting with "on" are event listeners; null and false skip.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "value") {
      el.value = v;
      if ("defaultValue" in el && el.tagName !== "SELECT") el.defaultValue = v; // what form.reset() restores
    } else if (k === "checked") el.checked = el.defaultChecked = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of el. */
export function setChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

let toastBox;

/** Shows a short message; kind is "ok" or "error". */
export function toast(message, kind = "ok") {
  if (!toastBox) {
    toastBox = h("div", { class: "toasts", role: "status", "aria-live": "polite" });
    document.body.append(toastBox);
  }
  const t = h("div", { class: `toast ${kind}` }, message);
  toastBox.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 8000 : 4000);
}

/**
 * Opens a modal dialog with a title and content; buttons are
 * [{label, primary, onclick(close)}]. Returns close().
 */
export function modal(title, content, buttons = []) {
  const dialog = h("dialog", { class: "modal" });
  const close = () => {
    dialog.close();
    dialog.remove();
  };
  const bar = h(
    "div",
    { class: "modal-buttons" },
    buttons.map((b) => h("button", { type: "button", class: b.primary ? "primary" : "", onclick: () => b.onclick(close) }, b.label)),
  );
  dialog.append(h("h2", null, title), content, bar);
  // Enter in a form presses the primary button instead of reloading the page.
  dialog.addEventListener("submit", (e) => {
    e.preventDefault();
    const primary = bar.querySelector("button.primary");
    if (primary) primary.click();
  });
  dialog.addEventListener("cancel", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return close;
}

/** Asks a yes/no question; resolves true when confirmed. */
export function confirmAction(title, text, yesLabel) {
  return new Promise((resolve) => {
    modal(title, h("p", null, text), [
      { label: "Cancel", onclick: (close) => (close(), resolve(false)) },
      { label: yesLabel, primary: true, onclick: (close) => (close(), resolve(true)) },
    ]);
  });
}

/** Labelled form field. */
export function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", null, label), input, hint ? h("small", null, hint) : null);
}

export function select(name, options, value) {
  return h(
    "select",
    { name },
    options.map((o) => {
      const [v, text] = Array.isArray(o) ? o : [o, o];
      return h("option", { value: v, selected: v === value ? true : null }, text);
    }),
  );
}

const units = ["B", "KiB", "MiB", "GiB", "TiB"];

export function formatBytes(n) {
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

/** "12 s ago", "3 min ago", or the local time for older ones. */
export function ago(iso, now = Date.now()) {
  if (!iso) return "—";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "—";
  const s = Math.round((now - t) / 1000);
  if (s < 0) return `in ${formatDuration(-s)}`;
  if (s < 5) return "just now";
  if (s < 3600 * 6) return `${formatDuration(s)} ago`;
  return new Date(t).toLocaleString();
}

export function formatDuration(s) {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function formatLatLon(lat, lon) {
  if (lat === null || lat === undefined) return "—";
  const ns = lat >= 0 ? "N" : "S";
  const ew = lon >= 0 ? "E" : "W";
  return `${Math.abs(lat).toFixed(5)}° ${ns}  ${Math.abs(lon).toFixed(5)}° ${ew}`;
}

/** A random token (256 bits, URL-safe base64), generated in the browser. */
export function randomToken() {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return btoa(String.fromCharCode(...b)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Runs f now and every ms while the page is shown; returns stop(). */
export function every(ms, f) {
  let timer = 0;
  let stopped = false;
  const tick = async () => {
    if (stopped) return;
    if (!document.hidden) {
      try {
        await f();
      } catch (e) {
        console.warn(e);
      }
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Shows an error from a call as a toast. */
export function showError(what, e) {
  toast(`${what}: ${e && e.message ? e.message : e}`, "error");
}

/** A table with a header row; rows are arrays of cells. */
export function table(headers, rows, empty) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h(
    "table",
    { class: "grid" },
    h("thead", null, h("tr", null, headers.map((x) => h("th", null, x)))),
    h("tbody", null, rows.map((r) => (r instanceof Node ? r : h("tr", null, r.map((c) => h("td", null, c)))))),
  );
}

/** A page section with a heading and optional actions. */
export function section(title, actions, ...body) {
  return h("section", { class: "panel" }, h("header", null, h("h2", null, title), h("div", { class: "actions" }, actions || [])), ...body);
}
