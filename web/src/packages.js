// The Data packages page: upload (with a progress bar), list, download,
// privacy, keywords, delete (/DataPackageTable, api.md §4.1). An upload
// marked "basemap" gets that keyword and becomes the map's basemap.
import { api, download, upload } from "./api.js";
import { ago, confirmAction, formatBytes, h, section, select, setChildren, showError, table, toast } from "./ui.js";

export function mountPackages(root) {
  const list = h("div");
  root.append(section("Upload a data package", null, uploadForm(() => load())), section("Data packages", [h("button", { type: "button", onclick: () => load() }, "Refresh")], list));

  async function load() {
    try {
      const res = await api("GET", "DataPackageTable");
      const rows = res.json_list.map((p) =>
        h(
          "tr",
          { dataset: { hash: p.Hash } },
          h("td", null, p.Name),
          h("td", null, formatBytes(p.Size)),
          h("td", null, h("span", { class: "mono", title: p.Hash }, `${p.Hash.slice(0, 12)}…`)),
          h("td", null, p.SubmissionUser || "—"),
          h("td", null, ago(p.SubmissionDateTime)),
          // Only what the caller may change is offered (the server says so).
          h("td", null, p.Editable === false ? (p.Privacy === 1 ? "private" : "public") : privacySelect(p, load)),
          h("td", null, p.Editable === false ? p.Keywords : keywordsInput(p, load)),
          h(
            "td",
            null,
            h(
              "div",
              { class: "row-actions" },
            h("button", { type: "button", class: "small", onclick: () => download(`DataPackageTable/${p.Hash}`, p.Name).catch((e) => showError("Download", e)) }, "Download"),
            p.Editable === false ? null : h("button", { type: "button", class: "small danger", onclick: () => remove(p, load) }, "Delete"),
            ),
          ),
        ),
      );
      setChildren(list, table(["Name", "Size", "SHA-256", "Submitter", "Submitted", "Privacy", "Keywords", ""], rows, "No data package yet."));
    } catch (e) {
      showError("Data packages", e);
    }
  }
  load();
  return () => {};
}

function uploadForm(reload) {
  const fileInput = h("input", { type: "file", name: "file", required: true });
  const progress = h("progress", { max: 100, value: 0, hidden: true, id: "upload-progress" });
  const status = h("span", { class: "upload-status", id: "upload-status" });
  const form = h(
    "form",
    {
      class: "form inline",
      id: "upload-form",
      onsubmit: async (e) => {
        e.preventDefault();
        const file = fileInput.files[0];
        if (!file) return;
        const basemap = form.querySelector("input[name=basemap]").checked;
        const button = form.querySelector("button");
        button.disabled = true;
        progress.hidden = false;
        progress.value = 0;
        status.textContent = `0 of ${formatBytes(file.size)}`;
        try {
          const q = new URLSearchParams({ filename: file.name, creatorUid: "outpost-console" });
          const res = await upload(`DataPackageTable?${q}`, file, (sent, total) => {
            progress.value = Math.round((sent / total) * 100);
            status.textContent = `${formatBytes(sent)} of ${formatBytes(total)}`;
          });
          progress.value = 100;
          if (basemap) {
            await api("PUT", "DataPackageTable", { DataPackages: [{ PrimaryKey: res.id, Keywords: "missionpackage,basemap" }] });
          }
          status.textContent = `${file.name} uploaded${basemap ? " as the basemap" : ""}`;
          toast(status.textContent);
          form.reset();
          reload();
        } catch (err) {
          status.textContent = "";
          showError("Upload", err);
        } finally {
          button.disabled = false;
        }
      },
    },
    fileInput,
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "basemap" }), "Basemap (an MBTiles file)"),
    h("button", { type: "submit", class: "primary" }, "Upload"),
    progress,
    status,
  );
  return form;
}

function privacySelect(p, reload) {
  const s = select("privacy", [["0", "public"], ["1", "private"]], String(p.Privacy));
  s.addEventListener("change", async () => {
    try {
      await api("PUT", "DataPackageTable", { DataPackages: [{ PrimaryKey: p.PrimaryKey, Privacy: Number(s.value) }] });
      toast(`${p.Name} is now ${s.value === "1" ? "private" : "public"}`);
    } catch (e) {
      showError("Privacy", e);
      reload();
    }
  });
  return s;
}

function keywordsInput(p, reload) {
  const input = h("input", { value: p.Keywords, class: "keywords", maxlength: 2000 });
  input.addEventListener("change", async () => {
    try {
      await api("PUT", "DataPackageTable", { DataPackages: [{ PrimaryKey: p.PrimaryKey, Keywords: input.value }] });
      toast(`Keywords of ${p.Name} saved`);
    } catch (e) {
      showError("Keywords", e);
      reload();
    }
  });
  return input;
}

async function remove(p, reload) {
  if (!(await confirmAction("Delete package", `Delete ${p.Name}? Clients can no longer download it.`, "Delete"))) return;
  try {
    await api("DELETE", "DataPackageTable", { DataPackages: [{ hash: p.Hash }] });
    toast(`${p.Name} deleted`);
    reload();
  } catch (e) {
    showError("Delete", e);
  }
}
