/* Annotation pages: keys, synchronised scrolling, and submits that are never dropped.
 *
 * Keys: any element with data-key="x" is activated by pressing x (radios with data-pick are
 * chosen and their form submitted, a rating's digit too; radios with data-choose are only chosen,
 * and the key scope named by their fieldset's data-then comes next; data-activate names a
 * key scope to come back to; a button with
 * data-submit submits its form; text fields get focus; anything else is clicked). Keys are
 * ignored while typing, except Esc (leave the field) and Ctrl/Cmd+Enter (submit its form).
 *
 * Never drop a judgement: forms marked data-retry are sent again, with the same fields and so
 * the same idempotency key, when the connection fails or the server answers 5xx; the banner
 * says so, and leaving the page asks first while something is unsent.
 *
 * Time on task: each submit carries `active_seconds`, the time on the unit while the page was
 * visible and the person had pressed a key, clicked, touched or scrolled within the last
 * minute (a hidden tab or a walk away does not count); the clock restarts with each new unit.
 */
(function () {
  "use strict";

  var MAX_DELAY_MS = 10000;
  var SETTLE_MS = 250; // a pick this soon after new work appeared was meant for the old one
  var swappedAt = 0;
  var attempts = 0;
  var pending = null;
  var activeCard = null; // id of the survey question being answered
  var IDLE_MS = 60000; // no input for this long: the person is away, the clock stops
  var TICK_MS = 1000;
  var clock = { active: 0, tick: Date.now(), input: Date.now() };

  /* The clock of the unit on the page: counts while visible and not idle. */
  function clockTick() {
    var now = Date.now();
    var until = Math.min(now, clock.input + IDLE_MS); // counted up to a minute after input
    if (document.visibilityState === "visible" && until > clock.tick) {
      clock.active += until - clock.tick;
    }
    clock.tick = now;
  }

  function clockRestart() {
    clock.active = 0;
    clock.tick = clock.input = Date.now();
  }

  function clockInput() {
    clockTick();
    clock.input = Date.now();
  }

  ["keydown", "pointerdown", "wheel", "touchstart", "scroll"].forEach(function (name) {
    document.addEventListener(name, clockInput, { capture: true, passive: true });
  });
  document.addEventListener("visibilitychange", function () {
    clockTick();
    if (document.visibilityState === "visible") clock.input = Date.now();
  });
  window.setInterval(clockTick, TICK_MS);

  /* The time a form carries: read once, at its first send, so a retry sends the same. */
  function activeSeconds(form) {
    if (!form.dataset.activeSeconds) {
      clockTick();
      form.dataset.activeSeconds = (clock.active / 1000).toFixed(1);
    }
    return form.dataset.activeSeconds;
  }

  function typingIn(target) {
    return target && target.closest &&
      target.closest("textarea, input:not([type=radio]):not([type=checkbox]), select, [contenteditable]");
  }

  function scope() {
    return document.querySelector("[data-keyscope].is-active") || document;
  }

  function find(key) {
    var sel = '[data-key="' + CSS.escape(key) + '"]';
    var inScope = scope().querySelector(sel);
    return inScope || document.querySelector(sel);
  }

  function activate(el) {
    if (el.matches("input[type=radio][data-pick]")) {
      el.checked = true;
      submit(el.form);
    } else if (el.matches("input[type=radio][data-choose]")) {
      el.checked = true;
      var then = el.closest("[data-then]");
      if (then) activateCard(document.getElementById(then.dataset.then));
    } else if (el.matches("[data-activate]")) {
      activateCard(document.getElementById(el.dataset.activate));
    } else if (el.matches("[data-submit]")) {
      submit(el.form);
    } else if (el.matches("textarea, input")) {
      el.focus();
    } else if (el.matches("summary")) {
      var details = el.parentElement;
      details.open = !details.open;
      var field = details.open && details.querySelector("textarea, input:not([type=hidden])");
      if (field) field.focus();
    } else {
      el.click();
    }
  }

  function submit(form) {
    if (Date.now() - swappedAt < SETTLE_MS) {
      status("That key came as the new text appeared, so it was not taken: press it again.", "warn");
      return;
    }
    if (form && form.reportValidity()) form.requestSubmit();
  }

  document.addEventListener("keydown", function (e) {
    var field = typingIn(e.target);
    if (field) {
      if (e.key === "Escape") field.blur();
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && field.form) {
        e.preventDefault();
        submit(field.form);
      }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || document.querySelector("dialog[open]")) return;
    if (e.key === "j" || e.key === "k") return moveCard(e, e.key === "j" ? 1 : -1);
    var el = find(e.key.length === 1 ? e.key.toLowerCase() : e.key);
    if (!el) return;
    e.preventDefault();
    activate(el);
  });

  document.addEventListener("click", function (e) {
    var pick = e.target.closest && e.target.closest("input[type=radio][data-pick]");
    if (pick && e.isTrusted) submit(pick.form);
    var opener = e.target.closest && e.target.closest("[data-open-dialog]");
    if (opener) document.getElementById(opener.dataset.openDialog).showModal();
    var toggle = e.target.closest && e.target.closest("[data-toggle-view]");
    if (toggle) {
      var inline = !document.body.classList.contains("inline-view");
      document.body.classList.toggle("inline-view", inline);
      try { localStorage.setItem("discern-inline-view", inline ? "1" : ""); } catch (err) { /* private mode */ }
    }
  });

  /* Survey: j / k move between questions; number keys answer the current one. */
  function moveCard(e, step) {
    var cards = Array.prototype.slice.call(document.querySelectorAll("[data-keyscope]"));
    if (!cards.length) return;
    e.preventDefault();
    var at = cards.indexOf(document.querySelector("[data-keyscope].is-active"));
    activateCard(cards[Math.max(0, Math.min(cards.length - 1, at + step))]);
  }

  function activateCard(card) {
    document.querySelectorAll("[data-keyscope].is-active").forEach(function (c) {
      c.classList.remove("is-active");
    });
    card.classList.add("is-active");
    activeCard = card.id;
    card.focus({ preventScroll: true });
    card.scrollIntoView({ block: "center", behavior: "smooth" });
  }

  document.addEventListener("focusin", function (e) {
    var card = e.target.closest && e.target.closest("[data-keyscope]");
    if (card && !card.classList.contains("is-active")) {
      document.querySelectorAll("[data-keyscope].is-active").forEach(function (c) {
        c.classList.remove("is-active");
      });
      card.classList.add("is-active");
      activeCard = card.id;
    }
  });

  /* Long texts scroll together, in proportion. */
  function syncScroll(root) {
    var panes = root.querySelectorAll ? root.querySelectorAll("[data-sync-scroll]") : [];
    panes.forEach(function (pane) {
      if (pane.dataset.synced) return;
      pane.dataset.synced = "1";
      pane.addEventListener("scroll", function () {
        if (pane._echo) { pane._echo = false; return; }
        var all = document.querySelectorAll("[data-sync-scroll]");
        var ratio = pane.scrollTop / Math.max(1, pane.scrollHeight - pane.clientHeight);
        all.forEach(function (other) {
          if (other === pane) return;
          var top = Math.round(ratio * (other.scrollHeight - other.clientHeight));
          if (other.scrollTop !== top) { other._echo = true; other.scrollTop = top; }
        });
      });
    });
  }

  /* Connection trouble: say so, and send the same form again. */
  function banner(text, kind) {
    var el = document.getElementById("connection");
    if (!el) return;
    el.hidden = !text;
    el.textContent = text || "";
    el.className = "connection" + (kind ? " " + kind : "");
  }

  function status(text, kind) {
    var el = document.getElementById("save-status");
    if (!el) return;
    el.textContent = text;
    el.className = "save-status" + (kind ? " " + kind : "");
  }

  function retry(form) {
    attempts += 1;
    pending = form;
    var delay = Math.min(500 * Math.pow(2, attempts - 1), MAX_DELAY_MS);
    banner("Connection lost. Your answer is kept and will be sent again in " +
      Math.ceil(delay / 1000) + " s (attempt " + (attempts + 1) + ").", "offline");
    status("Not saved yet", "pending");
    window.setTimeout(resend, delay);
  }

  function resend() {
    var form = pending;
    if (form && document.contains(form)) htmx.trigger(form, "submit");
  }

  /* The form that sent the request (htmx fires some events on the target instead). */
  function retryForm(e) {
    var elt = (e.detail.requestConfig && e.detail.requestConfig.elt) || e.detail.elt;
    return elt && elt.closest ? elt.closest("form[data-retry]") : null;
  }

  function failed(e) {
    var form = retryForm(e);
    var xhr = e.detail.xhr;
    var transient = !xhr || xhr.status === 0 || xhr.status >= 500 || xhr.status === 429;
    if (form && transient) return retry(form);
    if (form) delete form.dataset.activeSeconds; // refused: the next try is timed afresh
    pending = null;
    attempts = 0;
    var message = xhr && xhr.responseText && xhr.responseText.length < 300 ? xhr.responseText : "";
    banner(transient ? "Connection problem: try again." :
      "Not saved (" + (xhr ? xhr.status : "?") + "). " + message, "error");
    status("");
  }

  /* Always send the current CSRF token: logging in again (another tab) rotates it, and a
     retried form must not be refused for carrying the old one. */
  function cookie(name) {
    var found = document.cookie.match("(?:^|; )" + name + "=([^;]*)");
    return found ? decodeURIComponent(found[1]) : "";
  }

  document.addEventListener("htmx:configRequest", function (e) {
    var form = e.detail.elt && e.detail.elt.closest && e.detail.elt.closest("form[data-retry]");
    if (form && e.detail.formData && e.detail.formData.has("idempotency_key")) {
      e.detail.formData.set("active_seconds", activeSeconds(form));
    }
    var token = cookie("csrftoken");
    if (!token) return;
    e.detail.headers["X-CSRFToken"] = token;
    if (e.detail.formData && e.detail.formData.has("csrfmiddlewaretoken")) {
      e.detail.formData.set("csrfmiddlewaretoken", token);
    }
  });

  /* A session that ended answers with the login page: never swap it in; keep the answer and
     send it again once the annotator has logged in (in another tab). */
  document.addEventListener("htmx:beforeSwap", function (e) {
    var url = e.detail.xhr && e.detail.xhr.responseURL;
    if (!url || url.indexOf("/accounts/login/") === -1) return;
    e.detail.shouldSwap = false;
    var form = retryForm(e);
    banner("You are logged out. Log in again in another tab; your answer is kept and sent " +
      "again when you are back.", "error");
    status("Not saved yet", "pending");
    if (form) {
      pending = form;
      attempts = Math.max(attempts, 3);
      window.setTimeout(resend, 5000);
    }
  });

  document.addEventListener("htmx:sendError", failed);
  document.addEventListener("htmx:timeout", failed);
  document.addEventListener("htmx:responseError", failed);

  document.addEventListener("htmx:beforeRequest", function (e) {
    if (e.detail.elt.matches && e.detail.elt.matches("form[data-retry]")) status("Saving…", "pending");
  });

  document.addEventListener("htmx:afterRequest", function (e) {
    if (!e.detail.successful) return;
    var url = e.detail.xhr && e.detail.xhr.responseURL;
    if (url && url.indexOf("/accounts/login/") !== -1) return;
    if (pending || attempts) banner("");
    pending = null;
    attempts = 0;
    if (e.detail.elt.matches && e.detail.elt.matches("form[data-retry]") &&
        e.detail.elt.querySelector("[name=idempotency_key]")) clockRestart(); // an answer: next one's clock
    if (e.detail.elt.matches && e.detail.elt.matches("form[data-retry]") && !e.detail.xhr.getResponseHeader("HX-Trigger")) status("Saved");
  });

  document.addEventListener("htmx:afterSwap", function (e) {
    if (!e.detail.target || e.detail.target.id !== "work") return;
    swappedAt = Date.now();
    clockRestart();
    document.body.dataset.settled = "";
    window.setTimeout(function () { document.body.dataset.settled = "1"; }, SETTLE_MS);
  });

  document.addEventListener("judgement-saved", function (e) {
    status((e.detail && e.detail.message) || "Saved");
  });

  window.addEventListener("online", function () { if (pending) resend(); });

  window.addEventListener("beforeunload", function (e) {
    if (pending) { e.preventDefault(); e.returnValue = ""; }
  });

  function ready(root) {
    syncScroll(root);
    if (activeCard && root.id === activeCard) root.classList.add("is-active");
    var first = document.querySelector("[data-keyscope]");
    if (first && !document.querySelector("[data-keyscope].is-active")) first.classList.add("is-active");
  }

  document.body.dataset.settled = "1";
  try {
    if (localStorage.getItem("discern-inline-view")) document.body.classList.add("inline-view");
  } catch (err) { /* private mode */ }
  if (window.htmx) htmx.onLoad(ready); else ready(document);
})();
