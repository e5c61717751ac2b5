/* Mask explorer of the lab book (labbook/explorer.py). Self-contained: no library, no network.
 * The rules mirror explorer.py's cell_state and worked_example; tests/browser compares both.
 * Every output carries this script; it initialises the explorer it sits in (and any other
 * explorer on the page that has not run yet), so it is safe to run more than once. */
(function () {
  "use strict";
  var T_MIN = 2, T_MAX = 16;
  var SYMBOLS = { read: "\u2713", future: "\u00b7", pad: "\u2205", window: "\u22ef", align: "\u25f8",
    document: "\u2260", sink: "\u25c6" };
  var MINUS_INF = "\u2212\u221e";

  function fmt(template, params) {
    return String(template).replace(/\{(\w+)\}/g, function (whole, key) {
      return Object.prototype.hasOwnProperty.call(params, key) ? String(params[key]) : whole;
    });
  }

  function h(tag, attrs, children) {
    var node = document.createElement(tag);
    var name;
    for (name in attrs || {}) {
      if (!Object.prototype.hasOwnProperty.call(attrs, name) || attrs[name] === null || attrs[name] === undefined) continue;
      if (name === "text") node.textContent = attrs[name];
      else if (name === "hidden") node.hidden = !!attrs[name];
      else node.setAttribute(name, attrs[name] === true ? "true" : attrs[name] === false ? "false" : attrs[name]);
    }
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function clamp(x, lo, hi) { return Math.max(lo, Math.min(hi, x)); }

  /* Where a new document begins (not 0): same as explorer.Settings.starts. */
  function docStarts(documents) {
    var out = [], sum = 0;
    for (var n = 0; n < documents.length - 1; n++) { sum += documents[n]; out.push(sum); }
    return out;
  }
  /* Same as explorer.Settings.doc: a position past the last length belongs to the last document. */
  function docOf(s, j) {
    return docStarts(s.documents).filter(function (start) { return start <= j; }).length;
  }
  /* Lengths of the documents that begin at 0 and at each start below T; [] when there is only one. */
  function lengthsFrom(starts, T) {
    var cuts = starts.filter(function (x) { return x > 0 && x < T; }).sort(function (a, b) { return a - b; });
    if (!cuts.length) return [];
    var out = [], prev = 0;
    cuts.concat([T]).forEach(function (cut) { if (cut > prev) { out.push(cut - prev); prev = cut; } });
    return out;
  }

  /* The rules: same as explorer.cell_state. */
  function cellState(s, r, j, T, pad, offset) {
    var i = offset + r;
    var d = s.align === "bottom-right" ? i : r;
    if (j >= T - pad) return { allowed: false, reason: "pad", leak: "" };
    if (s.causal && j > d) return { allowed: false, reason: j <= i ? "align" : "future", leak: "" };
    if (s.documents.length && docOf(s, j) !== docOf(s, i)) return { allowed: false, reason: "document", leak: "" };
    var reason = "";
    if (s.window && j < d - s.window + 1) {
      if (j >= s.sinks) return { allowed: false, reason: "window", leak: "" };
      reason = "sink";
    }
    return { allowed: true, reason: reason, leak: j === i + 1 ? "target" : j > i ? "future" : "" };
  }
  function symbolOf(c) { return c.leak ? "!" : SYMBOLS[c.reason || "read"]; }

  /* Same as explorer.worked_example. */
  function workedExample(s, Q, K) {
    var T = 3, pad = Math.min(s.padding[s.sequence], 2), offset = Math.min(s.offset, 2);
    var scale = Math.sqrt(Q[0].length);
    var out = { offset: offset, scores: [], weights: [], states: [] };
    for (var r = 0; r < T - offset; r++) {
      var q = Q[offset + r], masked = [], states = [], top = -Infinity;
      for (var j = 0; j < T; j++) {
        var st = cellState(s, r, j, T, pad, offset);
        var x = (q[0] * K[j][0] + q[1] * K[j][1]) / scale;
        masked.push(st.allowed ? x : -Infinity);
        states.push(st);
        top = Math.max(top, masked[j]);
      }
      var weights;
      if (top === -Infinity) {
        weights = [NaN, NaN, NaN];
      } else {
        var exps = masked.map(function (v) { return v === -Infinity ? 0 : Math.exp(v - top); });
        var total = exps.reduce(function (a, b) { return a + b; }, 0);
        weights = exps.map(function (e) { return e / total; });
      }
      out.scores.push(masked);
      out.weights.push(weights);
      out.states.push(states);
    }
    return out;
  }

  function fmtScore(x) { return x === -Infinity ? MINUS_INF : x.toFixed(2); }
  function fmtWeight(x) { return isNaN(x) ? "NaN" : x.toFixed(2); }

  function init(root) {
    if (!root || root.getAttribute("data-ready") === "true") return;
    var cfg = JSON.parse(root.getAttribute("data-config"));
    var tx = cfg.texts, sentences = cfg.sentences;
    var s = JSON.parse(JSON.stringify(cfg.state));
    s.documents = s.documents || [];
    s.sinks = s.sinks || 0;
    /* The ticked boundaries, kept while T is shorter than some of them: typing T = 12 passes through
     * T = 1, and the boundaries come back once the row is long enough again. */
    var cuts = docStarts(s.documents);
    var uid = root.id || ("lbx-" + Math.random().toString(36).slice(2));
    var rev = 0;
    var app = root.querySelector(".lbx-app");
    var staticView = root.querySelector(".lbx-static");

    /* ---- controls */
    function numberField(label, control, value, min, max, extra) {
      var input = h("input", Object.assign({ type: "number", min: min, max: max, step: 1, value: value,
        "data-control": control, id: uid + "-" + control + (extra && extra["data-seq"] !== undefined ? extra["data-seq"] : "") }, extra || {}));
      return h("label", { "class": "lbx-field" }, [h("span", { text: label }), input]);
    }
    var fieldT = numberField(tx.length, "T", s.T, T_MIN, T_MAX);
    var causalBox = h("input", { type: "checkbox", "data-control": "causal", id: uid + "-causal" });
    causalBox.checked = !!s.causal;
    var fieldCausal = h("label", { "class": "lbx-field lbx-check" }, [causalBox, h("span", { text: tx.causal })]);
    var seqSelect = h("select", { "data-control": "sequence", id: uid + "-sequence" }, [0, 1].map(function (n) {
      return h("option", { value: n, text: fmt(tx.seq, { n: n }) });
    }));
    seqSelect.value = String(s.sequence);
    var fieldSeq = h("label", { "class": "lbx-field" }, [h("span", { text: tx.sequence }), seqSelect]);
    var fieldPads = [0, 1].map(function (n) {
      return numberField(fmt(tx.padding, { n: n }), "padding", s.padding[n], 0, s.T - 1, { "data-seq": n });
    });
    var fieldW = numberField(tx.window, "window", s.window, 0, T_MAX);
    var fieldOffset = numberField(tx.offset, "offset", s.offset, 0, s.T - 1);
    var alignSelect = h("select", { "data-control": "align", id: uid + "-align" }, [
      h("option", { value: "bottom-right", text: tx.bottom_right }),
      h("option", { value: "top-left", text: tx.top_left })]);
    alignSelect.value = s.align;
    var fieldAlign = h("label", { "class": "lbx-field" }, [h("span", { text: tx.align }), alignSelect]);
    var fieldSinks = numberField(tx.sinks, "sinks", s.sinks, 0, T_MAX);
    /* One checkbox per gap between two keys: checked, a new document begins at that key. */
    var boundaryBox = h("div", { "class": "lbx-boundaries" });
    var fieldDocs = h("fieldset", { "class": "lbx-field lbx-docs" }, [h("legend", { text: tx.documents }), boundaryBox]);
    function renderBoundaries() {
      var starts = docStarts(s.documents);
      if (boundaryBox.children.length !== s.T - 1) {
        boundaryBox.textContent = "";
        for (var pos = 1; pos < s.T; pos++) {
          boundaryBox.appendChild(h("label", { "class": "lbx-check lbx-boundary" }, [
            h("input", { type: "checkbox", "data-control": "boundary", "data-pos": pos, id: uid + "-boundary" + pos,
              "aria-label": fmt(tx.boundary, { pos: pos }) }),
            h("span", { "aria-hidden": "true", text: "k" + pos })]));
        }
      }
      Array.prototype.forEach.call(boundaryBox.querySelectorAll("input"), function (box) {
        box.checked = starts.indexOf(+box.getAttribute("data-pos")) >= 0;
      });
    }
    var controls = h("div", { "class": "lbx-controls", role: "group", "aria-label": tx.title },
      [fieldT, fieldCausal, fieldSeq, fieldPads[0], fieldPads[1], fieldW, fieldOffset, fieldAlign, fieldSinks, fieldDocs]);

    /* ---- views (tabs) */
    var tabs = ["mask", "worked"].map(function (view) {
      return h("button", { type: "button", role: "tab", id: uid + "-tab-" + view, "data-view": view,
        "aria-controls": uid + "-panel-" + view, text: view === "mask" ? tx.view_mask : tx.view_worked });
    });
    var tablist = h("div", { role: "tablist", "class": "lbx-tabs", "aria-label": tx.views }, tabs);
    var panelMask = h("div", { role: "tabpanel", id: uid + "-panel-mask", "aria-labelledby": uid + "-tab-mask", "data-panel": "mask" });
    var panelWorked = h("div", { role: "tabpanel", id: uid + "-panel-worked", "aria-labelledby": uid + "-tab-worked", "data-panel": "worked" });
    var status = h("p", { "class": "lbx-status", role: "status", "aria-live": "polite", "aria-atomic": "true" });

    app.appendChild(controls);
    app.appendChild(tablist);
    app.appendChild(panelMask);
    app.appendChild(panelWorked);
    app.appendChild(status);

    function legend() {
      var items = [["read", SYMBOLS.read], ["future", SYMBOLS.future], ["pad", SYMBOLS.pad],
        ["window", SYMBOLS.window], ["align", SYMBOLS.align], ["document", SYMBOLS.document],
        ["sink", SYMBOLS.sink], ["leak", "!"], ["target", "\u25ce"]];
      return h("ul", { "class": "lbx-legend", "aria-label": tx.legend }, items.map(function (item) {
        return h("li", {}, [h("span", { "class": "lbx-key", "data-legend": item[0], "aria-hidden": "true", text: item[1] }),
          " " + tx["legend_" + item[0]]]);
      }));
    }

    function labels() {
      var words = sentences[s.sequence], real = s.T - s.padding[s.sequence], out = [];
      for (var j = 0; j < s.T; j++) out.push(j < real ? words[j] : tx.pad);
      return out;
    }

    /* Same as explorer.has_target: the next token is real and in the query's own document (a packed
     * row gives the first token of each document the label -100: it is not predicted from the previous one). */
    function hasTarget(i) {
      var real = s.T - s.padding[s.sequence];
      return i < real - 1 && (!s.documents.length || docOf(s, i + 1) === docOf(s, i));
    }

    /* ---- rendering */
    function renderGrid() {
      var label = labels(), rows = s.T - s.offset, sel = s.row;
      var selI = sel === null ? -1 : s.offset + sel;
      var real = s.T - s.padding[s.sequence];
      var head = [h("th", { scope: "col", "class": "lbx-corner", text: tx.corner })];
      var starts = docStarts(s.documents);
      function docStart(j) { return starts.indexOf(j) >= 0 ? "true" : null; }
      var readCols = {};
      if (sel !== null) {
        for (var jj = 0; jj < s.T; jj++) if (cellState(s, sel, jj, s.T, s.padding[s.sequence], s.offset).allowed) readCols[jj] = true;
      }
      for (var j = 0; j < s.T; j++) {
        head.push(h("th", { scope: "col", "data-col": j, "data-read": sel !== null && !!readCols[j],
          "data-target": sel !== null && hasTarget(selI) && j === selI + 1, "data-pad": j >= real,
          "data-doc-start": docStart(j) },
          ["k" + j, h("br"), h("span", { "class": "lbx-tok", text: label[j] })]));
      }
      var body = [];
      for (var r = 0; r < rows; r++) {
        var i = s.offset + r, cells = [];
        var button = h("button", { type: "button", "class": "lbx-q", "data-row": r, "data-query": i,
          "aria-pressed": sel === r, tabindex: (sel === null ? r === 0 : sel === r) ? "0" : "-1" },
          ["q" + i + " ", h("span", { "class": "lbx-tok", text: label[i] })]);
        cells.push(h("th", { scope: "row", "data-pad": i >= real }, [button]));
        for (j = 0; j < s.T; j++) {
          var c = cellState(s, r, j, s.T, s.padding[s.sequence], s.offset);
          var mark = "";
          if (r === sel) {
            if (hasTarget(i) && j === i + 1) mark = "target";
            else if (c.allowed) mark = c.reason === "sink" ? "sink" : "read";
          }
          cells.push(h("td", { "data-row": r, "data-col": j, "data-allowed": c.allowed, "data-reason": c.reason,
            "data-leak": c.leak, "data-mark": mark, "data-doc-start": docStart(j), text: symbolOf(c) }));
        }
        body.push(h("tr", { "data-row": r, "data-selected": r === sel, "data-pad": i >= real,
          "data-doc-start": docStart(i) }, cells));
      }
      var table = h("table", { "class": "lbx-grid" }, [
        h("caption", { "class": "lbx-sr", text: tx.caption }),
        h("thead", {}, [h("tr", {}, head)]),
        h("tbody", {}, body)]);
      panelMask.textContent = "";
      panelMask.appendChild(h("p", { "class": "lbx-note", text: tx.structure_note }));
      panelMask.appendChild(h("p", { "class": "lbx-caption", "aria-hidden": "true", text: tx.caption }));
      panelMask.appendChild(h("div", { "class": "lbx-scroll" }, [table]));
      panelMask.appendChild(legend());
    }

    function renderWorked() {
      var ex = workedExample(s, cfg.Q, cfg.K);
      panelWorked.textContent = "";
      panelWorked.appendChild(h("p", { "class": "lbx-note", text: tx.worked_note }));
      var anyLeak = false, anyNaN = false;
      [["scores", tx.worked_scores, ex.scores, fmtScore], ["weights", tx.worked_weights, ex.weights, fmtWeight]].forEach(function (spec) {
        var head = [h("th", {})];
        for (var j = 0; j < 3; j++) head.push(h("th", { scope: "col", text: "k" + j }));
        var rows = spec[2].map(function (row, r) {
          return h("tr", {}, [h("th", { scope: "row", text: "q" + (ex.offset + r) })].concat(row.map(function (x, j) {
            var st = ex.states[r][j];
            if (spec[0] === "weights" && st.leak && x > 0) anyLeak = true;
            if (spec[0] === "weights" && isNaN(x)) anyNaN = true;
            return h("td", { "data-row": r, "data-col": j, "data-allowed": st.allowed, "data-reason": st.reason,
              "data-leak": st.leak, "data-value": isNaN(x) ? "NaN" : x === -Infinity ? "-inf" : x.toFixed(4), text: spec[3](x) });
          })));
        });
        panelWorked.appendChild(h("div", { "class": "lbx-numbox" }, [
          h("p", { "class": "lbx-caption", "aria-hidden": "true", text: spec[1] }),
          h("table", { "class": "lbx-num", "data-matrix": spec[0] }, [
            h("caption", { "class": "lbx-sr", text: spec[1] }), h("thead", {}, [h("tr", {}, head)]), h("tbody", {}, rows)])]));
      });
      if (anyLeak) panelWorked.appendChild(h("p", { "class": "lbx-warn", "data-warn": "leak", text: tx.worked_leak }));
      if (anyNaN) panelWorked.appendChild(h("p", { "class": "lbx-warn", "data-warn": "nan", text: tx.worked_nan }));
    }

    function statusText() {
      if (s.row === null) return tx.pick;
      var label = labels(), words = sentences[s.sequence];
      var r = s.row, i = s.offset + r, real = s.T - s.padding[s.sequence];
      var pad = s.padding[s.sequence];
      if (i >= real) return fmt(tx.status_pad_query, { q: i });
      var keys = [], leaks = 0, others = [], sinks = [];
      for (var j = 0; j < s.T; j++) {
        var c = cellState(s, r, j, s.T, pad, s.offset);
        if (c.allowed) keys.push("k" + j);
        if (c.leak) leaks++;
        if (c.reason === "document") others.push("k" + j);
        if (c.reason === "sink") sinks.push("k" + j);
      }
      var parts = [fmt(tx.status_row, { q: i, token: label[i], n: keys.length, keys: keys.length ? keys.join(", ") : tx.none })];
      if (!keys.length) parts.push(tx.status_empty);
      if (others.length) parts.push(fmt(tx.status_document, { n: others.length, keys: others.join(", ") }));
      if (sinks.length) parts.push(fmt(tx.status_sink, { n: sinks.length, keys: sinks.join(", ") }));
      if (hasTarget(i)) parts.push(fmt(tx.status_target, { target: words[i + 1], pos: i + 1 }));
      else if (i + 1 < real) parts.push(fmt(tx.status_target_document, { target: words[i + 1], pos: i + 1 }));
      else parts.push(fmt(tx.status_target_outside, { target: words[i + 1] }));
      if (leaks) parts.push(fmt(tx.status_leak, { n: leaks }));
      return parts.join(" ");
    }

    function render(focusRow) {
      var pad = s.padding[s.sequence];
      tabs.forEach(function (tab) {
        var on = tab.getAttribute("data-view") === s.view;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.setAttribute("tabindex", on ? "0" : "-1");
      });
      panelMask.hidden = s.view !== "mask";
      panelWorked.hidden = s.view !== "worked";
      renderGrid();
      renderWorked();
      status.textContent = statusText();
      rev += 1;
      root.setAttribute("data-T", s.T);
      root.setAttribute("data-causal", s.causal ? "true" : "false");
      root.setAttribute("data-window", s.window);
      root.setAttribute("data-sequence", s.sequence);
      root.setAttribute("data-pad", pad);
      root.setAttribute("data-offset", s.offset);
      root.setAttribute("data-align", s.align);
      root.setAttribute("data-documents", s.documents.join(","));
      root.setAttribute("data-sinks", s.sinks);
      root.setAttribute("data-view", s.view);
      root.setAttribute("data-selected-row", s.row === null ? "" : s.row);
      root.setAttribute("data-rev", rev);
      if (focusRow !== undefined && focusRow !== null) {
        var button = panelMask.querySelector('button[data-row="' + focusRow + '"]');
        if (button) button.focus();
      }
    }

    /* ---- state changes */
    function fixRanges() {
      s.T = clamp(s.T, T_MIN, T_MAX);
      s.padding = s.padding.map(function (p) { return clamp(p, 0, s.T - 1); });
      s.offset = clamp(s.offset, 0, s.T - 1);
      s.window = clamp(s.window, 0, T_MAX);
      s.sinks = clamp(s.sinks, 0, T_MAX);
      // the boundaries that fit in the row cut it, the last document takes the rest ([]: one document)
      s.documents = lengthsFrom(cuts, s.T);
      if (s.row !== null && s.row >= s.T - s.offset) s.row = null;
      renderBoundaries();
      fieldPads.forEach(function (field) { field.querySelector("input").max = s.T - 1; });
      fieldOffset.querySelector("input").max = s.T - 1;
    }
    function writeBack() {
      fieldT.querySelector("input").value = s.T;
      fieldPads.forEach(function (field, n) { field.querySelector("input").value = s.padding[n]; });
      fieldW.querySelector("input").value = s.window;
      fieldSinks.querySelector("input").value = s.sinks;
      fieldOffset.querySelector("input").value = s.offset;
    }
    function onNumber(event) {
      var input = event.target, control = input.getAttribute("data-control");
      var value = parseInt(input.value, 10);
      if (isNaN(value)) return;
      if (control === "T") s.T = value;
      else if (control === "padding") s.padding[+input.getAttribute("data-seq")] = value;
      else if (control === "window") s.window = value;
      else if (control === "sinks") s.sinks = value;
      else if (control === "offset") { s.offset = value; s.row = null; }
      fixRanges();
      if (event.type === "change") writeBack();
      render();
    }
    controls.addEventListener("input", function (event) {
      if (event.target.type === "number") onNumber(event);
    });
    controls.addEventListener("change", function (event) {
      var target = event.target, control = target.getAttribute("data-control");
      if (target.type === "number") return onNumber(event);
      if (control === "causal") s.causal = target.checked;
      else if (control === "sequence") s.sequence = +target.value;
      else if (control === "align") s.align = target.value;
      else if (control === "boundary") {
        var pos = +target.getAttribute("data-pos");
        cuts = cuts.filter(function (x) { return x !== pos; });
        if (target.checked) cuts.push(pos);
      }
      fixRanges();
      render();
    });
    panelMask.addEventListener("click", function (event) {
      var row = event.target.closest("tr[data-row]");
      if (!row || !panelMask.contains(row)) return;
      s.row = +row.getAttribute("data-row");
      render(event.target.closest("button") ? s.row : undefined);
    });
    panelMask.addEventListener("keydown", function (event) {
      var button = event.target.closest("button.lbx-q");
      if (!button) return;
      var r = +button.getAttribute("data-row"), last = s.T - s.offset - 1, next = null;
      if (event.key === "ArrowDown") next = Math.min(r + 1, last);
      else if (event.key === "ArrowUp") next = Math.max(r - 1, 0);
      else if (event.key === "Home") next = 0;
      else if (event.key === "End") next = last;
      if (next === null) return;
      event.preventDefault();
      s.row = next;
      render(next);
    });
    tablist.addEventListener("click", function (event) {
      var tab = event.target.closest("[role=tab]");
      if (!tab) return;
      s.view = tab.getAttribute("data-view");
      render();
      tab.focus();
    });
    tablist.addEventListener("keydown", function (event) {
      if (["ArrowLeft", "ArrowRight", "Home", "End"].indexOf(event.key) < 0) return;
      event.preventDefault();
      s.view = event.key === "ArrowLeft" || event.key === "Home" ? "mask" : "worked";
      render();
      tablist.querySelector('[data-view="' + s.view + '"]').focus();
    });
    /* Keys typed inside the widget are the widget's: JupyterLab must not treat them as notebook
     * shortcuts (data-lm-suppress-shortcuts does this in JupyterLab 4; stopping the event covers
     * other hosts). Shortcuts with Ctrl, Alt or Meta still reach the page. */
    root.addEventListener("keydown", function (event) {
      if (!event.ctrlKey && !event.metaKey && !event.altKey) event.stopPropagation();
    });

    fixRanges();
    render();
    if (staticView) staticView.hidden = true;
    app.hidden = false;
    root.setAttribute("data-ready", "true");
  }

  var here = document.currentScript;
  var own = here && here.closest ? here.closest(".lbx") : null;
  try { init(own); } catch (error) { if (own) own.setAttribute("data-error", String(error)); throw error; }
  Array.prototype.forEach.call(document.querySelectorAll('.lbx[data-ready="false"]'), function (root) {
    try { init(root); } catch (error) { root.setAttribute("data-error", String(error)); }
  });
})();
