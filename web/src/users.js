// The System users page (administrators only): list with each user's role
// and groups, create (with client certificates and a connection package),
// change a role, set groups, download the package, invite a device
// (invitations.js: one-time enrollment token and the ATAK, iTAK and WinTAK
// codes), rotate a token, delete (which revokes the user's certificates);
// the enrollment invitations; and the Groups section (groups.js).
import { api, currentSession, download, refreshSession } from "./api.js";
import { inviteDevice, invitationsSection } from "./invitations.js";
import { editMemberships, groupsSection, membershipsText } from "./groups.js";
import { confirmAction, field, h, modal, randomToken, section, select, setChildren, showError, table, toast } from "./ui.js";

export function mountUsers(root) {
  const list = h("div", { id: "users-list" });
  const groups = groupsSection(() => load());
  const invitations = invitationsSection();
  // A change of users or memberships changes the groups' member lists too,
  // and a deleted user's invitations go with it.
  const reload = () => (load(), groups.load(), invitations.load());
  const form = createForm(reload);
  root.append(
    section("Create a system user", null, form),
    section("System users", [h("button", { type: "button", onclick: () => load() }, "Refresh")], list),
    invitations.el,
    groups.el,
  );

  async function load() {
    try {
      const users = await api("GET", "ManageSystemUser/getAll");
      const rows = users.SystemUsers.map((u) => {
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
            h("button", { type: "button", class: "small invite", onclick: () => inviteDevice(u, () => invitations.load()) }, "Invite a device"),
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
