// Sign in: a system user's name and password (POST /api/login answers a
// login token), or an API token pasted as is. Either way GET /api/whoami
// then says who the token is and with which role; the pages follow it.
import { api, ApiError, signIn, whoami } from "./api.js";
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
          signIn(await whoami(res.token, res.expires));
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
          signIn(await whoami(value));
        } catch (err) {
          if (err.status === 401) fail("This token is unknown or expired.");
          else if (err.status === 429) fail("Too many failed attempts from this address; wait a minute.");
          else fail(err.message);
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
      h(
        "small",
        { id: "token-hint" },
        "An API token or a system user's own token. The first start writes the administrator's token to admin.token in the data directory (/var/lib/outpost/admin.token for the .deb, outpost-data/admin.token for make run; the server's log names the file); outpost token create NAME makes more.",
      ),
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
