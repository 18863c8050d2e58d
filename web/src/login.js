// Sign in: a system user's name and password (POST /api/login answers a
// login token), or an API token pasted as is (checked with one call).
import { api, ApiError, signIn } from "./api.js";
import { h } from "./ui.js";

export function mountLogin(root, reason) {
  const error = h("p", { class: "error", role: "alert", hidden: !reason }, reason || "");
  const fail = (msg) => {
    error.textContent = msg;
    error.hidden = false;
  };

  const password = h(
    "form",
    {
      class: "form",
      id: "login-password",
      onsubmit: async (e) => {
        e.preventDefault();
        const f = new FormData(e.target);
        const button = e.target.querySelector("button");
        button.disabled = true;
        try {
          const res = await api("POST", "api/login", { username: f.get("username"), password: f.get("password") });
          signIn({ token: res.token, name: res.username, kind: "user", expires: res.expires });
        } catch (err) {
          fail(err instanceof ApiError && err.status === 401 ? "Wrong user name or password." : err.message);
        } finally {
          button.disabled = false;
        }
      },
    },
    h("label", { class: "field" }, h("span", null, "User name"), h("input", { name: "username", autocomplete: "username", required: true, autofocus: true })),
    h("label", { class: "field" }, h("span", null, "Password"), h("input", { name: "password", type: "password", autocomplete: "current-password", required: true })),
    h("button", { type: "submit", class: "primary" }, "Sign in"),
  );

  const token = h(
    "form",
    {
      class: "form",
      id: "login-token",
      onsubmit: async (e) => {
        e.preventDefault();
        const value = new FormData(e.target).get("token").trim();
        const button = e.target.querySelector("button");
        button.disabled = true;
        try {
          // Any authenticated route tells whether the token is known.
          const res = await fetch("api/users", { headers: { Authorization: `Bearer ${value}`, Accept: "application/json" }, cache: "no-store" });
          if (res.status === 401) throw new ApiError(401, "This token is unknown or expired.");
          if (res.status === 429) throw new ApiError(429, "Too many failed attempts from this address; wait a minute.");
          signIn({ token: value, name: "API token", kind: "token" });
        } catch (err) {
          fail(err.message);
        } finally {
          button.disabled = false;
        }
      },
    },
    h(
      "label",
      { class: "field" },
      h("span", null, "API token"),
      h("input", { name: "token", type: "password", autocomplete: "off", required: true, spellcheck: "false" }),
      h("small", null, "outpost token create NAME makes one; the first start writes admin.token in the data directory."),
    ),
    h("button", { type: "submit", class: "primary" }, "Sign in with token"),
  );

  root.append(
    h(
      "div",
      { class: "login" },
      h("div", { class: "login-box" }, h("h1", null, "Outpost"), h("p", { class: "sub" }, "Server console"), error, password, h("div", { class: "or" }, "or"), token),
    ),
  );
  return () => {};
}
