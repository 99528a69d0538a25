import { REPORT_CSS } from "../report/index.ts";

/** The dashboard's stylesheet: the report's, plus navigation and forms. */
export const UI_CSS = `${REPORT_CSS}
nav.top{display:flex;gap:16px;align-items:center;padding:10px 22px;border-bottom:1px solid var(--line);background:var(--soft)}
nav.top a{text-decoration:none;color:var(--fg)}nav.top a.on{font-weight:700;border-bottom:2px solid var(--blue)}
nav.top .modes-inline{margin-left:auto;font-size:12px;color:var(--muted)}nav.top .modes-inline label{cursor:pointer;margin-left:4px}
#dm-unified:checked~nav .modes-inline label[for=dm-unified],#dm-split:checked~nav .modes-inline label[for=dm-split]{font-weight:700;text-decoration:underline}
table.sortable th[data-sort]{cursor:pointer}table.sortable th.asc::after{content:" ▲"}table.sortable th.desc::after{content:" ▼"}
tr.has-error td{background:#fff1f2}.row-error{color:var(--rej);font-size:12px}
.live{color:var(--blue);font-weight:600}
.field{margin:8px 0}.field label{display:block;font-size:13px;margin-bottom:2px}.field input,.field select,.field textarea{font:inherit;padding:4px \
6px;border:1px solid #d1d5db;border-radius:5px;min-width:220px}
.field textarea{width:100%}.field .default{font-size:12px;color:var(--muted);margin-left:8px}
.field-error{color:var(--rej);font-size:12px;min-height:0}.field-error:empty{display:none}
.field.invalid input,.field.invalid select,.field.invalid textarea{border-color:var(--rej)}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:0 20px}
button{font:inherit;padding:4px 12px;border-radius:5px;border:1px solid #9ca3af;background:#fff;cursor:pointer}button:hover{background:var(--soft)}
.stages{display:flex;flex-wrap:wrap;gap:6px;align-items:center}.stage{border:1px solid var(--line);border-radius:12px;padding:1px \
9px;font-size:12px;color:var(--muted)}
.stage.on{background:var(--blue);border-color:var(--blue);color:#fff;font-weight:600}#launch-log{max-height:180px}
.launch{border:1px solid var(--line);border-radius:8px;padding:4px 10px;margin:8px 0}.launch pre.log{max-height:220px}
form.inline label{margin-right:10px}
dialog.sleep-confirm{max-width:min(1100px,94vw);max-height:88vh;overflow:auto;border:1px solid var(--line);border-radius:10px;padding:6px 20px}
dialog.sleep-confirm::backdrop{background:rgba(15,23,42,.45)}.confirm-actions{position:sticky;bottom:0;background:#fff;padding:10px 0;margin:0}
.confirm-btn{background:var(--blue);border-color:var(--blue);color:#fff;font-weight:600}.confirm-btn:hover{background:var(--blue);opacity:.9}
.evidence-card{border:1px solid var(--line);border-radius:8px;padding:2px 12px;margin:8px 0}.evidence-card h4{margin:8px 0 4px}.evidence-card \
ul{margin:4px 0;padding-left:18px}
`;

/**
 * The dashboard's only script (served same-origin, so the page CSP allows no inline script).
 * Requests ride on the session cookie (HttpOnly, SameSite=Strict); the page holds no token.
 */
export const UI_JS = `"use strict";
(function () {
  function api(method, url, body) {
    return fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (r) {
      return r.json().catch(function () { return null; }).then(function (data) { return { status: r.status, data: data }; });
    });
  }

  // Sortable tables: numbers by value, text by locale order.
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th[data-sort]").forEach(function (th) {
      th.addEventListener("click", function () {
        var col = Number(th.getAttribute("data-sort"));
        var asc = !th.classList.contains("asc");
        table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v") || "";
          var y = b.cells[col].getAttribute("data-v") || "";
          var nx = Number(x), ny = Number(y);
          var c = x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Runs list: rows of running runs follow their stores; the table body is re-rendered in place.
  var runsTable = document.getElementById("runs");
  if (runsTable) {
    var pending = null;
    function refreshRows() {
      clearTimeout(pending);
      pending = setTimeout(function () {
        fetch("/").then(function (r) { return r.text(); }).then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.querySelector("#runs tbody");
          if (!fresh) return;
          var picked = Array.prototype.map.call(runsTable.querySelectorAll("input.pick:checked"), function (i) { return i.value; });
          runsTable.tBodies[0].innerHTML = fresh.innerHTML;
          runsTable.querySelectorAll("input.pick").forEach(function (i) { if (picked.indexOf(i.value) >= 0) i.checked = true; });
          var sorted = runsTable.querySelector("th.asc, th.desc");
          if (sorted) { var asc = sorted.classList.contains("asc"); sorted.classList.remove("asc", "desc"); if (!asc) sorted.classList.add("asc"); \
sorted.click(); }
        });
      }, 200);
    }
    runsTable.querySelectorAll('tr[data-run] .b-running').forEach(function (b) {
      var id = b.closest("tr").getAttribute("data-run");
      new EventSource("/runs/" + encodeURIComponent(id) + "/events").addEventListener("update", refreshRows);
    });
  }

  var cmp = document.getElementById("compare-btn");
  if (cmp) cmp.addEventListener("click", function () {
    var picked = Array.prototype.map.call(document.querySelectorAll("input.pick:checked"), function (i) { return i.value; });
    if (picked.length !== 2) { alert("Select exactly two runs."); return; }
    location.href = "/compare?a=" + encodeURIComponent(picked[0]) + "&b=" + encodeURIComponent(picked[1]);
  });

  // Live run page: the server pushes an event when the run's store changes; re-render the body.
  var runBody = document.getElementById("run-body");
  if (runBody) {
    var id = runBody.getAttribute("data-run");
    var live = document.getElementById("live");
    var es = new EventSource("/runs/" + encodeURIComponent(id) + "/events");
    var busy = false, again = false;
    function refresh() {
      if (busy) { again = true; return; }
      busy = true;
      fetch("/runs/" + encodeURIComponent(id) + "/body").then(function (r) { return r.text(); }).then(function (html) {
        var open = Array.prototype.map.call(runBody.querySelectorAll("details[open]"), function (d) { return d.id; });
        var scrollY = window.scrollY;
        var tmp = document.createElement("div");
        tmp.innerHTML = html;
        var fresh = tmp.firstElementChild;
        runBody.innerHTML = fresh ? fresh.innerHTML : html;
        if (fresh) {
          runBody.setAttribute("data-steps", fresh.getAttribute("data-steps") || "");
          runBody.setAttribute("data-status", fresh.getAttribute("data-status") || "");
        }
        open.forEach(function (o) { var d = document.getElementById(o); if (d) d.setAttribute("open", ""); });
        window.scrollTo(0, scrollY);
        if (live) live.textContent = runBody.getAttribute("data-status") === "running" ? "live" : "";
      }).finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
    }
    es.addEventListener("update", refresh);
    es.addEventListener("open", function () { if (live && runBody.getAttribute("data-status") === "running") live.textContent = "live"; });
  }

  // A run this dashboard launched: follow its output (current stage, step, log tail).
  var progress = document.getElementById("launch-progress");
  if (progress && progress.getAttribute("data-status") === "running") {
    var logBox = document.getElementById("launch-log");
    var where = document.getElementById("launch-where");
    var stageOf = function (line) {
      var m = /\\[(\\d)\\/6 (ROLLOUT|REFLECT|AGGREGATE|SELECT|UPDATE|EVALUATE)/.exec(line);
      if (m) return m[2].toLowerCase();
      if (/SLOW UPDATE/.test(line)) return "slow update";
      if (/META SKILL/.test(line)) return "meta skill";
      if (/^\\s*TEST\\b/.test(line)) return "test";
      return null;
    };
    var pes = new EventSource("/api/launches/" + encodeURIComponent(progress.getAttribute("data-launch")) + "/events");
    pes.addEventListener("change", function (ev) {
      var d = JSON.parse(ev.data);
      if (d.line) {
        logBox.textContent = (logBox.textContent + "\\n" + d.line).split("\\n").slice(-15).join("\\n");
        var st = stageOf(d.line);
        if (st) progress.querySelectorAll(".stage").forEach(function (s) { s.classList.toggle("on", s.getAttribute("data-stage") === st); });
        var step = /\\[STEP (\\d+)\\/(\\d+)\\]/.exec(d.line);
        if (step) where.textContent = "step " + step[1] + " of " + step[2];
      }
      if (d.status !== "running") {
        pes.close();
        progress.setAttribute("data-status", d.status);
        var badge = document.getElementById("launch-status");
        badge.textContent = d.status;
        badge.className = "badge b-" + (d.status === "stopped" ? "interrupted" : d.status);
        progress.querySelectorAll(".stage").forEach(function (s) { s.classList.remove("on"); });
        var stop = progress.querySelector(".stop-btn");
        if (stop) stop.remove();
      }
    });
  }

  // Launch form: validated by the server with the CLI's schema; errors go next to their field.
  var form = document.getElementById("launch-form");
  function values() {
    var out = { config: form.elements.config.value, extra: form.elements.extra.value, values: {} };
    form.querySelectorAll("[data-error-for]").forEach(function (e) {
      var name = e.getAttribute("data-error-for");
      if (name === "config" || name === "extra") return;
      var el = form.elements[name];
      if (el) out.values[name] = el.value;
    });
    return out;
  }
  function showErrors(errors) {
    form.querySelectorAll("[data-error-for]").forEach(function (e) {
      var msg = errors[e.getAttribute("data-error-for")] || "";
      e.textContent = msg;
      e.parentElement.classList.toggle("invalid", msg !== "");
    });
  }
  function showDefaults(resolved) {
    form.querySelectorAll("[data-default-for]").forEach(function (e) {
      var v = resolved[e.getAttribute("data-default-for")];
      e.textContent = v === undefined ? "" : "config: " + v;
    });
  }
  function renderLaunches() {
    fetch("/launches").then(function (r) { return r.text(); }).then(function (html) {
      var box = document.getElementById("launches");
      if (!box) return;
      box.innerHTML = html;
      box.querySelectorAll("pre.log").forEach(function (p) { p.scrollTop = p.scrollHeight; });
    });
  }
  if (form) {
    var msg = document.getElementById("launch-msg");
    var timer = null;
    function check() {
      api("POST", "/api/validate", values()).then(function (r) {
        if (!r.data) return;
        showErrors(r.data.errors || {});
        if (r.data.ok) showDefaults(r.data.resolved || {});
      });
    }
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(check, 250); });
    form.elements.config.addEventListener("change", function () { showDefaults({}); check(); });
    form.elements.config.addEventListener("focus", function () { form.elements.config.select(); });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      msg.textContent = "starting…";
      api("POST", "/api/launch", values()).then(function (r) {
        if (r.status === 200 && r.data && r.data.ok) {
          showErrors({});
          msg.textContent = "started " + r.data.launch.out;
          renderLaunches();
          watchLaunch(r.data.launch.id);
        } else {
          showErrors((r.data && r.data.errors) || {});
          msg.textContent = (r.data && r.data.error) || "not started: fix the fields marked in red";
        }
      });
    });
    check();
  }
  function watchLaunch(id) {
    var es = new EventSource("/api/launches/" + encodeURIComponent(id) + "/events");
    var pending = false;
    es.addEventListener("change", function (ev) {
      if (!pending) { pending = true; setTimeout(function () { pending = false; renderLaunches(); }, 300); }
      try { if (JSON.parse(ev.data).status !== "running") { es.close(); setTimeout(renderLaunches, 50); } } catch (e) { /* keep listening */ }
    });
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (t && t.classList && t.classList.contains("stop-btn")) {
      api("POST", "/api/launches/" + encodeURIComponent(t.getAttribute("data-launch")) + "/stop").then(renderLaunches);
    }
    // Sleep: Adopt and Rollback open a confirmation showing what will change; only its button acts.
    if (t && t.classList && t.hasAttribute("data-dialog")) {
      var dlg = document.getElementById(t.getAttribute("data-dialog"));
      if (dlg && dlg.showModal) dlg.showModal();
    }
    if (t && t.classList && t.classList.contains("cancel-btn")) {
      var open = t.closest("dialog");
      if (open) open.close();
    }
    if (t && t.classList && (t.classList.contains("confirm-btn") || t.classList.contains("reject-btn"))) {
      var verb = t.classList.contains("reject-btn") ? "reject" : t.getAttribute("data-verb");
      var box = t.closest("dialog");
      t.disabled = true;
      var out = document.getElementById("sleep-msg");
      if (out) out.textContent = verb + " running…";
      api("POST", "/api/sleep/" + verb, { night: t.getAttribute("data-night"), project: t.getAttribute("data-project"), skill: \
t.getAttribute("data-skill") || "" }).then(function (r) {
        t.disabled = false;
        if (box) box.close();
        if (out) out.textContent = r.data && (r.data.message || r.data.error) || ("HTTP " + r.status);
        if (r.status === 200) location.reload();
      });
    }
  });
  document.querySelectorAll(".launch[data-status=running]").forEach(function (l) { watchLaunch(l.getAttribute("data-launch")); });
})();
`;
