// The My account page: who the console is signed in as (GET /api/whoami),
// the groups that decide what it sees and who sees what it sends, and, for
// a system user with certificates, its own connection package
// (GET /ManageSystemUser/getSystemUser and /certificatePackage, both
// "self" routes: a user reaches its own record only).
import { api, download } from "./api.js";
import { directionText } from "./groups.js";
import { h, section, setChildren, showError, table, toast } from "./ui.js";

export function mountAccount(root) {
  const facts = h("div", { id: "account-facts" });
  const groups = h("div", { id: "account-groups" });
  const pkg = h("div", { id: "account-package" });
  root.append(section("My account", null, facts), section("My groups", null, groups), section("Connection package", null, pkg));
  load();
  return () => {};

  async function load() {
    let me;
    try {
      me = await api("GET", "api/whoami");
    } catch (e) {
      showError("My account", e);
      return;
    }
    setChildren(
      facts,
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Name"),
        h("dd", { id: "account-name" }, me.name),
        h("dt", null, "Kind"),
        h("dd", null, me.kind),
        h("dt", null, "Role"),
        h("dd", { id: "account-role" }, h("span", { class: `badge role role-${me.role}` }, me.role)),
        me.uid ? [h("dt", null, "ID"), h("dd", null, h("span", { class: "mono" }, me.uid))] : null,
      ),
      h(
        "p",
        { class: "note" },
        me.admin
          ? "An administrator: every page of the console, and every group's data on it."
          : "A user: the map, data packages, missions and emergencies, showing what your groups see. Your own data packages, geo objects and emergencies are yours to change.",
      ),
    );
    showGroups(me);
    if (me.kind === "system user") showPackage(me);
    else setChildren(pkg, h("p", { class: "note" }, "An API token has no certificate and no connection package."));
  }

  function showGroups(me) {
    if (me.kind !== "system user") {
      setChildren(groups, h("p", { class: "note" }, "An API token belongs to no group; on this console it sees everything."));
      return;
    }
    const rows = me.groups.map((g) =>
      h(
        "tr",
        { dataset: { group: g.name } },
        h("td", null, g.name),
        h("td", { class: "direction" }, g.direction),
        h("td", null, directionText(g.direction)),
        h("td", null, activeText(g)),
      ),
    );
    setChildren(
      groups,
      table(["Group", "Direction", "Meaning", "Active"], rows, "No group: you are in __ANON__ both ways, with everyone else who has no group."),
      h("p", { class: "note" }, "An administrator sets your groups; ATAK's channel switches turn each direction on and off."),
    );
  }

  async function showPackage(me) {
    let u;
    try {
      const res = await api("GET", `ManageSystemUser/getSystemUser?id=${encodeURIComponent(me.uid)}`);
      u = res.SystemUsers[0];
    } catch (e) {
      showError("Connection package", e);
      return;
    }
    if (!u || !u.certificatePackageName) {
      setChildren(pkg, h("p", { class: "note" }, "You have no client certificate. An administrator can make one by creating the user with certificates."));
      return;
    }
    setChildren(
      pkg,
      h("p", null, `Your connection package: ${u.certificatePackageName}. It holds your certificate and its private key: keep it like a password.`),
      h(
        "button",
        {
          type: "button",
          id: "download-own-package",
          onclick: async () => {
            try {
              const f = await download(`ManageSystemUser/certificatePackage?id=${encodeURIComponent(u.id)}`, u.certificatePackageName);
              toast(`Downloaded ${f.name} (${f.size} bytes).`);
            } catch (e) {
              showError("Download package", e);
            }
          },
        },
        "Download my package",
      ),
    );
  }
}

function activeText(g) {
  const on = [];
  if (g.activeIn) on.push("sending");
  if (g.activeOut) on.push("receiving");
  return on.length ? on.join(", ") : "switched off";
}
