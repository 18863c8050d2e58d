// Enrollment invitations (administrators): "Invite a device" on a user's
// row asks for the expiry, the number of uses and the device, and shows the
// answer once: ATAK's code (it holds the token), iTAK's code (no
// credential: iTAK asks for the user name and the token as password), the
// link of WinTAK's enrollment package (no credential either) and the token.
// The section lists every invitation with its state, and revokes.
import { api } from "./api.js";
import { confirmAction, field, h, modal, section, select, setChildren, showError, table, toast } from "./ui.js";

const devices = [
  ["atak", "ATAK (Android)"],
  ["itak", "iTAK (iPhone, iPad)"],
  ["wintak", "WinTAK (Windows)"],
];

export function invitationsSection() {
  const list = h("div", { id: "invitations-list" });
  const el = section("Enrollment invitations", [h("button", { type: "button", onclick: () => load() }, "Refresh")], list);
  async function load() {
    try {
      const res = await api("GET", "api/invitations");
      const rows = res.invitations.map((inv) =>
        h(
          "tr",
          { dataset: { invitation: inv.id, state: inv.state } },
          h("td", null, inv.user),
          h("td", null, inv.device),
          h("td", { class: "state" }, inv.state),
          h("td", null, `${inv.usesLeft} of ${inv.uses}`),
          h("td", null, new Date(inv.expires).toLocaleString()),
          h("td", null, inv.createdBy),
          h(
            "td",
            null,
            inv.state === "active"
              ? h("button", { type: "button", class: "small danger revoke", onclick: () => revoke(inv, load) }, "Revoke")
              : null,
          ),
        ),
      );
      setChildren(list, table(["User", "Device", "State", "Uses left", "Expires", "Created by", ""], rows, "No invitation yet."));
    } catch (e) {
      showError("Enrollment invitations", e);
    }
  }
  load();
  return { el, load };
}

async function revoke(inv, reload) {
  if (!(await confirmAction("Revoke invitation", `Revoke ${inv.user}'s invitation? Devices that enrolled with it keep their certificates.`, "Revoke"))) return;
  try {
    await api("DELETE", `api/invitations/${encodeURIComponent(inv.id)}`);
    toast("Invitation revoked");
    reload();
  } catch (e) {
    showError("Revoke invitation", e);
  }
}

/** Asks how long, how often and for which device, then invites. */
export function inviteDevice(u, reload) {
  const form = h(
    "form",
    { class: "form", id: "invite-form" },
    field("Device", select("device", devices, u.DeviceType === "desktop" || u.DeviceType === "wintak" ? "wintak" : "atak")),
    field("Valid for", select("expires", [["1h", "1 hour"], ["24h", "24 hours"], ["7d", "7 days"], ["30d", "30 days"]], "24h")),
    field("Uses", h("input", { name: "uses", type: "number", min: 1, max: 100, value: 1, required: true }), "how many devices may enroll with it"),
  );
  modal(`Invite a device for ${u.username}`, form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Create invitation",
      primary: true,
      onclick: async (close) => {
        if (!form.reportValidity()) return;
        const f = new FormData(form);
        try {
          const inv = await api("POST", `api/users/${encodeURIComponent(u.id)}/invitations`, {
            device: f.get("device"),
            expires: f.get("expires"),
            uses: Number(f.get("uses")),
          });
          close();
          showInvitation(inv);
          reload();
        } catch (e) {
          showError("Invite a device", e);
        }
      },
    },
  ]);
}

function code(title, pngBase64, text, how) {
  return h(
    "figure",
    { class: "invite-code" },
    h("figcaption", null, title),
    h("img", { class: "qr", src: `data:image/png;base64,${pngBase64}`, alt: `${title} QR code`, width: 220, height: 220 }),
    h("p", { class: "note" }, how),
    h("p", { class: "mono small code-text" }, text),
  );
}

/** The answer of a new invitation: shown once. */
function showInvitation(inv) {
  const token = h("input", { readonly: true, value: inv.token, class: "mono token-value", onfocus: (e) => e.target.select() });
  const uses = inv.uses === 1 ? "one device" : `${inv.uses} devices`;
  modal(
    `Invitation for ${inv.user}`,
    h(
      "div",
      { class: "invitation" },
      h("p", null, `Valid until ${new Date(inv.expires).toLocaleString()} for ${uses}. Shown this once: only the token's hash is stored.`),
      h(
        "div",
        { class: "invite-codes" },
        code("ATAK", inv.atak.png, inv.atak.text, "Scan with ATAK's QR scanner (ATAK 5.1 or later): it enrolls for a certificate and connects."),
        code("iTAK", inv.itak.png, inv.itak.text, `Scan with iTAK when adding a server, then sign in as ${inv.user} with the token below as password.`),
        h(
          "figure",
          { class: "invite-code" },
          h("figcaption", null, "WinTAK"),
          h("a", { href: inv.wintak.url, class: "wintak-link", target: "_blank", rel: "noopener" }, "Enrollment package"),
          h("p", { class: "note" }, `Open the link on the Windows PC, sign in as ${inv.user} with the token, import the package into WinTAK and enroll with the same name and token.`),
          h("p", { class: "mono small code-text" }, inv.wintak.url),
        ),
      ),
      field("Token", token),
      h("p", { class: "note" }, "Anyone who sees the ATAK code or the token can enroll as this user until it is used up, expires or is revoked: show it only to that user."),
    ),
    [
      {
        label: "Copy token",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(inv.token);
            toast("Token copied");
          } catch {
            token.select();
          }
        },
      },
      { label: "Done", primary: true, onclick: (close) => close() },
    ],
  );
}
