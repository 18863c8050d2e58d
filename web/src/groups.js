// Groups, the administrator's side (access.md "Groups"): the list with
// members, create and delete (/api/groups), and the editor of one user's
// memberships (PUT /api/users/{uid}/groups). Shown on the System users page.
import { api } from "./api.js";
import { ago, confirmAction, field, h, modal, section, select, setChildren, showError, table, toast } from "./ui.js";

const ANON = "__ANON__";

export const DIRECTIONS = [
  ["BOTH", "both ways"],
  ["IN", "IN: sends to the group"],
  ["OUT", "OUT: receives from the group"],
];

/** What a membership's direction means, in a few words. */
export function directionText(direction) {
  switch (direction) {
    case "IN":
      return "what you send goes to the group";
    case "OUT":
      return "what the group carries reaches you";
    default:
      return "sends to and receives from the group";
  }
}

/** "Red (IN), Cyan (BOTH)", or the __ANON__ a user without groups is in. */
export function membershipsText(groups) {
  if (!groups || !groups.length) return `${ANON} (no group)`;
  return groups.map((g) => `${g.name} (${g.direction})`).join(", ");
}

/**
 * The Groups section: list, create, delete. changed() runs after a change
 * that moves memberships (a deletion), so the users list follows. Answers
 * {el, load}.
 */
export function groupsSection(changed) {
  const list = h("div", { id: "groups-list" });
  const form = createForm(() => load());
  const el = section(
    "Groups",
    [h("button", { type: "button", onclick: () => load() }, "Refresh")],
    h(
      "p",
      { class: "note" },
      "A user's groups decide what it sees and who sees what it sends. A user without a group is in __ANON__ both ways, with anonymous clients.",
    ),
    form,
    list,
  );

  async function load() {
    try {
      const res = await api("GET", "api/groups");
      const rows = res.groups.map((g) => {
        const members = g.members || [];
        return h(
          "tr",
          { dataset: { group: g.name } },
          h("td", null, g.name),
          h("td", { class: "num" }, g.bitpos),
          h("td", null, g.description || "—"),
          h("td", { class: "members" }, membersText(g.name, members)),
          h("td", null, ago(g.created)),
          h(
            "td",
            null,
            h(
              "div",
              { class: "row-actions" },
              g.name === ANON ? null : h("button", { type: "button", class: "small danger delete-group", onclick: () => remove(g) }, "Delete"),
            ),
          ),
        );
      });
      setChildren(list, table(["Name", "Bit", "Description", "Members", "Created", ""], rows, "No group."));
    } catch (e) {
      showError("Groups", e);
    }
  }

  async function remove(g) {
    const n = (g.members || []).length;
    const who = n === 1 ? "Its member loses" : n ? `Its ${n} members lose` : "Nobody is a member; still,";
    const text =
      `Delete the group ${g.name}? ${who} this membership (a user left without any group is in ${ANON}). ` +
      `Data shared with ${g.name} alone is then unshared: only administrators see it, and a group made later does not.`;
    if (!(await confirmAction("Delete group", text, "Delete group"))) return;
    try {
      await api("DELETE", `api/groups/${encodeURIComponent(g.name)}`);
      toast(`Group ${g.name} deleted`);
      load();
      changed();
    } catch (e) {
      showError("Delete group", e);
    }
  }

  load();
  return { el, load };
}

// __ANON__ holds, besides its members, every user without a group.
function membersText(name, members) {
  if (name !== ANON) return members.length ? members.join(", ") : "—";
  const rest = h("small", { class: "note" }, "everyone without a group");
  return members.length ? [`${members.join(", ")}, `, rest] : rest;
}

function createForm(reload) {
  const form = h(
    "form",
    {
      class: "form inline",
      id: "create-group",
      onsubmit: async (e) => {
        e.preventDefault();
        const f = new FormData(form);
        const button = form.querySelector("button");
        button.disabled = true;
        try {
          const g = await api("POST", "api/groups", { name: f.get("name").trim(), description: f.get("description").trim() });
          form.reset();
          toast(`Group ${g.name} created (bit ${g.bitpos})`);
          reload();
        } catch (err) {
          showError("Create group", err);
        } finally {
          button.disabled = false;
        }
      },
    },
    field("Name", h("input", { name: "name", required: true, maxlength: 64, pattern: "[^,]*[^, ][^,]*", title: "no commas", placeholder: "Red" })),
    field("Description", h("input", { name: "description", maxlength: 255, placeholder: "Assault team" })),
    h("button", { type: "submit", class: "primary" }, "Create group"),
  );
  return form;
}

/**
 * Opens the editor of a user's memberships: one row per group with its
 * direction, chosen among the existing groups. saved(user) runs with the
 * server's answer.
 */
export async function editMemberships(user, saved) {
  let groups;
  try {
    groups = (await api("GET", "api/groups")).groups.map((g) => g.name);
  } catch (e) {
    showError("Groups", e);
    return;
  }
  const rows = h("div", { class: "memberships" });
  const empty = h("p", { class: "note" }, `No group: ${user.username} is in ${ANON} both ways.`);
  const sync = () => (empty.hidden = rows.children.length > 0);
  const addRow = (name, direction) => {
    const row = h(
      "div",
      { class: "membership" },
      select("group", groups, name),
      select("direction", DIRECTIONS, direction),
      h("button", { type: "button", class: "small remove-membership", onclick: () => (row.remove(), sync()) }, "Remove"),
    );
    rows.append(row);
    sync();
  };
  for (const m of user.groups || []) addRow(m.name, m.direction);
  sync();
  const add = h(
    "button",
    {
      type: "button",
      class: "small add-membership",
      disabled: !groups.length,
      onclick: () => {
        const used = new Set([...rows.querySelectorAll("select[name=group]")].map((s) => s.value));
        addRow(groups.find((g) => !used.has(g)) || groups[0], "BOTH");
      },
    },
    "Add a group",
  );
  const form = h(
    "form",
    { id: "memberships-form" },
    rows,
    empty,
    h("div", { class: "membership-add" }, add),
    h("p", { class: "note" }, "IN: what the user sends goes to the group. OUT: what the group carries reaches the user. Groups are made in the Groups section."),
  );
  modal(`Groups of ${user.username}`, form, [
    { label: "Cancel", onclick: (close) => close() },
    {
      label: "Save",
      primary: true,
      onclick: async (close) => {
        const body = [...rows.children].map((r) => ({
          name: r.querySelector("select[name=group]").value,
          direction: r.querySelector("select[name=direction]").value,
        }));
        try {
          const u = await api("PUT", `api/users/${encodeURIComponent(user.id)}/groups`, { groups: body });
          close();
          toast(`Groups of ${u.username}: ${membershipsText(u.groups)}`);
          saved(u);
        } catch (e) {
          showError("Set groups", e);
        }
      },
    },
  ]);
}
