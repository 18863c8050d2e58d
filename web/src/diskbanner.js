// The disk banner: a warning across every page of an administrator's
// console while free space on the server's data disk is below its reserve
// (operations.md "Free disk space"), read from GET /api/server's disk field every
// 15 seconds. Uploads then get 507 and the CoT history pauses; the relay
// carries on.
import { api } from "./api.js";
import { every, formatBytes, h, setChildren } from "./ui.js";

export function mountDiskBanner(root) {
  // The first look waits a little: a session kept from an earlier page
  // load may claim a role it lost, and is put right (re-routed) first.
  let stop = () => {};
  const start = setTimeout(() => {
    stop = every(15000, async () => {
      const s = await api("GET", "api/server");
      setChildren(root, ...diskWarning(s.disk));
    });
  }, 2000);
  return () => {
    clearTimeout(start);
    stop();
    setChildren(root);
  };
}

/** The banner's content for a disk field: nothing while above the reserve. */
export function diskWarning(d) {
  if (!d || !d.belowReserve) return [];
  const what = d.belowFloor
    ? "Free disk space is below the hard floor: every change that needs space is refused (507), uploads too."
    : "Free disk space is below the reserve: uploads are refused (507) and the CoT history is paused; the relay carries on.";
  return [
    h(
      "div",
      { class: `disk-banner${d.belowFloor ? " floor" : ""}`, id: "disk-banner", role: "alert" },
      h("strong", null, what),
      ` ${formatBytes(d.freeBytes)} free of ${formatBytes(d.totalBytes)}; ${formatBytes(d.reserveBytes)} kept in reserve. `,
      "Free space on the data directory's filesystem (delete data packages or other files); it resumes by itself.",
    ),
  ];
}
