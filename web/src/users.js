// The System users page (administrators only): list with each user's role
// and groups, create (with client certificates and a connection package),
// change a role, set groups, download the package or show it as a QR code,
// rotate a token, delete (which revokes the user's certificates); and the
// Groups section (groups.js).
import qrcode from "qrcode-generator";
import { api, currentSession, download, refreshSession } from "./api.js";
import { editMemberships, groupsSection, membershipsText } from "./groups.js";
import { confirmAction, field, h, modal, randomToken, section, select, setChildren, showError, table, toast } from "./ui.js";

export function mountUsers(root) {
  const list = h("div", { id: "users-list" });
  const groups = groupsSection(() => load());
  // A change of users or memberships changes the groups' member lists too.
  const reload = () => (load(), groups.load());
  const form = createForm(reload);
  root.append(
    section("Create a system user", null, form),
    section("System users", [h("button", { type: "button", onclick: () => load() }, "Refresh")], list),
    groups.el,
  );

  async function load() {
    try {
      const [users, pkgs] = await Promise.all([api("GET", "ManageSystemUser/getAll"), api("GET", "DataPackageTable")]);
      const byName = new Map(pkgs.json_list.map((p) => [p.Name, p]));
      const rows = users.SystemUsers.map((u) => {
        const pkg = u.certificatePackageName ? byName.get(u.certificatePackageName) : null;
        return h(
          "tr",
          { dataset: { user: u.username } },
          h("td", null, u.username),
          h("td", null, h("span", { class: "mono" }, u.id)),
          h("td", null, roleSelect(u, load)),
          h(
            "td",
            { class: "groups" },
            h("span", { class: "memberships-text" }, membershipsText(u.groups)),
            " ",
            h("button", { type: "button", class: "small edit-groups", onclick: () => editMemberships(u, reload) }, "Edit"),
          ),
          h("td", null, u.certificatePackageName || "—"),
          h(
            "td",
            null,
            h(
              "div",
              { class: "row-actions" },
            u.certificatePackageName
              ? h("button", { type: "button", class: "small download-package", onclick: () => downloadPackage(u) }, "Download package")
              : null,
            pkg ? h("button", { type: "button", class: "small", onclick: () => showQR(u, pkg) }, "QR code") : null,
            h("button", { type: "button", class: "small", onclick: () => rotate(u) }, "Rotate token"),
            h("button", { type: "button", class: "small danger", onclick: () => remove(u, reload) }, "Delete"),
            ),
          ),
        );
      });
      setChildren(list, table(["Name", "ID", "Role", "Groups", "Connection package", ""], rows, "No system user yet."));
    } catch (e) {
      showError("System users", e);
    }
  }
  load();
  return () => {};
}

function createForm(reload) {
  const form = h(
    "form",
    {
      class: "form inline",
      id: "create-user",
      onsubmit: async (e) => {
        e.preventDefault();
        const f = new FormData(form);
        const user = {
          Name: f.get("name").trim(),
          Password: f.get("password"),
          Group: f.get("group").trim(),
          Role: f.get("role"),
          DeviceType: f.get("device"),
          Certs: f.get("certs") === "on" ? "true" : "false",
        };
        const button = form.querySelector("button");
        button.disabled = true;
        try {
          const res = await api("POST", "ManageSystemUser/postSystemUser", { systemUsers: [user] });
          const created = (res.SystemUsers || [])[0];
          if (!created) throw new Error(res.message);
          form.reset();
          showOnce(`User ${created.username} created`, created.token, created.certificatePackageName);
          reload();
        } catch (err) {
          showError("Create user", err);
        } finally {
          button.disabled = false;
        }
      },
    },
    field("Name", h("input", { name: "name", required: true, maxlength: 64, pattern: "[A-Za-z0-9._ \\-]+", title: "letters, digits, . _ - and spaces" })),
    field("Password", h("input", { name: "password", type: "password", required: true, minlength: 8, autocomplete: "new-password" })),
    field("Groups", h("input", { name: "group", placeholder: "Cyan, Red", maxlength: 255 }), "comma-separated; made if missing; member both ways"),
    field("Role", select("role", [["user", "user"], ["admin", "administrator"]], "user")),
    field("Device", select("device", [["mobile", "ATAK (Android)"], ["itak", "iTAK"], ["desktop", "WinTAK"]], "mobile")),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "certs", checked: true }), "Client certificate and connection package"),
    h("button", { type: "submit", class: "primary" }, "Create"),
  );
  return form;
}

/** Shows a token that is never shown again. */
function showOnce(title, token, pkgName) {
  const input = h("input", { readonly: true, value: token, class: "mono token-value", onfocus: (e) => e.target.select() });
  modal(
    title,
    h(
      "div",
      null,
      h("p", null, "The user's token, shown this once (only its hash is stored):"),
      input,
      pkgName ? h("p", null, `Connection package: ${pkgName}. Download it from the list.`) : null,
    ),
    [
      {
        label: "Copy token",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(token);
            toast("Token copied");
          } catch {
            input.select();
          }
        },
      },
      { label: "Done", primary: true, onclick: (close) => close() },
    ],
  );
}

async function downloadPackage(u) {
  try {
    const f = await download(`ManageSystemUser/certificatePackage?id=${encodeURIComponent(u.id)}`, u.certificatePackageName || "package.zip");
    toast(`Downloaded ${f.name} (${f.size} bytes). It holds a private key: hand it over like a password.`);
  } catch (e) {
    showError("Download package", e);
  }
}

/**
 * The package's address on the client API's HTTP port, as a QR code for a
 * phone on the mesh. Only when that port is on: it has no authentication,
 * so the code itself is the secret.
 */
async function showQR(u, pkg) {
  let server;
  try {
    server = await api("GET", "api/server");
  } catch (e) {
    showError("QR code", e);
    return;
  }
  const http = server.services.find((s) => s.name === "HTTP_TAK_service");
  if (!http || !http.enabled) {
    modal("QR code", h("p", null, "The client API's HTTP port is off, so a phone cannot fetch the package by a link. Download the package and hand it over instead."), [
      { label: "Close", primary: true, onclick: (close) => close() },
    ]);
    return;
  }
  const url = `http://${server.publicHost}:${http.port}/Marti/sync/content?hash=${pkg.Hash}`;
  const qr = qrcode(0, "M");
  qr.addData(url);
  qr.make();
  const img = h("img", { src: qr.createDataURL(6, 4), alt: "QR code of the package link", class: "qr" });
  modal(
    `Connection package of ${u.username}`,
    h(
      "div",
      { class: "qr-box" },
      img,
      h("p", { class: "mono small" }, url),
      h("p", { class: "note" }, "Scan on the phone to download the package, then open it with ATAK or iTAK. Anyone who scans this code can fetch the package, which holds the user's key: show it only to that user."),
    ),
    [{ label: "Close", primary: true, onclick: (close) => close() }],
  );
}

/**
 * The role of u, changed as soon as another is chosen. An administrator
 * giving up its own role is asked first: the console then shows it only a
 * user's pages.
 */
function roleSelect(u, reload) {
  const s = select("role", [["user", "user"], ["admin", "administrator"]], u.role);
  s.classList.add("role-select");
  s.setAttribute("aria-label", `Role of ${u.username}`);
  s.addEventListener("change", async () => {
    const role = s.value;
    const self = currentSession().uid === u.id;
    if (self && role !== "admin") {
      const ok = await confirmAction("Give up your role", "You are about to make yourself a user: this console will then show you only a user's pages.", "Make me a user");
      if (!ok) {
        s.value = u.role;
        return;
      }
    }
    s.disabled = true;
    try {
      const res = await api("PUT", `api/users/${encodeURIComponent(u.id)}/role`, { role });
      toast(`${res.username} is now ${res.role === "admin" ? "an administrator" : "a user"}`);
      if (self) await refreshSession();
      reload();
    } catch (e) {
      s.value = u.role;
      showError("Change role", e);
    } finally {
      s.disabled = false;
    }
  });
  return s;
}

async function rotate(u) {
  if (!(await confirmAction("Rotate token", `Give ${u.username} a new token? The old one stops working at once.`, "Rotate"))) return;
  const token = randomToken();
  try {
    await api("PUT", "ManageSystemUser/putSystemUser", { systemUsers: [{ uid: u.id, Token: token }] });
    showOnce(`New token of ${u.username}`, token);
  } catch (e) {
    showError("Rotate token", e);
  }
}

async function remove(u, reload) {
  if (!(await confirmAction("Delete user", `Delete ${u.username}? Their certificates are revoked and their clients disconnected.`, "Delete"))) return;
  try {
    await api("DELETE", "ManageSystemUser/deleteSystemUser", { id: u.id });
    toast(`${u.username} deleted`);
    reload();
  } catch (e) {
    showError("Delete user", e);
  }
}
