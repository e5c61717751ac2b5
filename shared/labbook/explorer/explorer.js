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
  /* Why a key is blocked, in the order the grid's summary counts them (explorer.BLOCKED_REASONS). */
  var BLOCKED_REASONS = ["future", "align", "pad", "document", "window"];

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
  /* Same as explorer.cell_kind: which cell_* text says why the key is readable or blocked. */
  function cellKind(c, i, j) {
    if (c.leak) return c.leak === "target" ? "leak_target" : "leak";
    if (!c.allowed) return c.reason;
    if (c.reason === "sink") return "sink";
    return j === i ? "self" : "read";
  }

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
    /* Likewise the paddings and the offset the reader asked for: typing T = 16 passes through T = 1,
     * which clamps them; they come back once T allows them again. */
    var wanted = { padding: s.padding.slice(), offset: s.offset };
    /* The grid's one Tab stop (roving tabindex): query row r, column c (-1: the row's query button). */
    var focusAt = { r: s.row === null ? 0 : s.row, c: -1 };
    var changed = false;
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
    /* Fourteen controls and more come before the grid: one button takes the keyboard straight there. */
    var skip = h("button", { type: "button", "class": "lbx-skip", "data-action": "skip", text: tx.skip });
    skip.addEventListener("click", function () {
      if (s.view !== "mask") { s.view = "mask"; render(); }
      focusCell(focusAt.r, focusAt.c);
    });

    app.appendChild(skip);
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
        return h("li", {}, [h("span", { "class": "lbx-key", "data-legend": item[0], text: item[1] }),
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
    /* The grid follows the WAI-ARIA grid pattern: one Tab stop, arrow keys move between cells, and each
     * cell's name says query, key, readable or blocked, and why (the symbols alone say nothing to a
     * screen reader). The names do not depend on the selected row, so selecting one only re-marks cells. */
    function cellName(r, j, label) {
      var i = s.offset + r, c = cellState(s, r, j, s.T, s.padding[s.sequence], s.offset);
      var state = tx["cell_" + cellKind(c, i, j)];
      if (j === i + 1 && hasTarget(i) && c.leak !== "target") state = fmt(tx.cell_with_target, { state: state });
      return fmt(tx.cell, { q: i, query: label[i], k: j, key: label[j], state: state });
    }

    function renderGrid() {
      var label = labels(), rows = s.T - s.offset;
      var real = s.T - s.padding[s.sequence];
      var head = [h("th", { scope: "col", role: "columnheader", "class": "lbx-corner", text: tx.corner })];
      var starts = docStarts(s.documents);
      function docStart(j) { return starts.indexOf(j) >= 0 ? "true" : null; }
      for (var j = 0; j < s.T; j++) {
        head.push(h("th", { scope: "col", role: "columnheader", "data-col": j, "data-pad": j >= real,
          "data-doc-start": docStart(j) },
          ["k" + j, h("br"), h("span", { "class": "lbx-tok", text: label[j] })]));
      }
      var body = [];
      for (var r = 0; r < rows; r++) {
        var i = s.offset + r, cells = [];
        var button = h("button", { type: "button", "class": "lbx-q", id: uid + "-q" + r, "data-row": r, "data-query": i, tabindex: "-1" },
          ["q" + i + " ", h("span", { "class": "lbx-tok", text: label[i] })]);
        cells.push(h("th", { scope: "row", role: "rowheader", "data-pad": i >= real }, [button]));
        for (j = 0; j < s.T; j++) {
          var c = cellState(s, r, j, s.T, s.padding[s.sequence], s.offset);
          cells.push(h("td", { role: "gridcell", tabindex: "-1", "data-row": r, "data-col": j, "data-allowed": c.allowed,
            "data-reason": c.reason, "data-leak": c.leak, "data-doc-start": docStart(j), "aria-label": cellName(r, j, label) },
            [h("span", { "aria-hidden": "true", text: symbolOf(c) })]));
        }
        // a row is named by its query alone, not by the sentences of all its cells
        body.push(h("tr", { role: "row", "aria-labelledby": uid + "-q" + r, "data-row": r, "data-pad": i >= real, "data-doc-start": docStart(i) }, cells));
      }
      var captionId = uid + "-caption", helpId = uid + "-help";
      var table = h("table", { "class": "lbx-grid", role: "grid", "aria-labelledby": captionId, "aria-describedby": helpId,
        "data-grid": "mask" }, [
        h("caption", { "class": "lbx-sr", id: captionId, text: tx.caption }),
        h("thead", { role: "rowgroup" }, [h("tr", { role: "row" }, head)]),
        h("tbody", { role: "rowgroup" }, body)]);
      panelMask.textContent = "";
      panelMask.appendChild(h("p", { "class": "lbx-note", text: tx.structure_note }));
      panelMask.appendChild(h("p", { "class": "lbx-caption", "aria-hidden": "true", text: tx.caption }));
      panelMask.appendChild(h("p", { "class": "lbx-note", id: helpId, text: tx.grid_help }));
      panelMask.appendChild(h("div", { "class": "lbx-scroll" }, [table]));
      /* What the focused cell says, shown for sighted keyboard users (hidden from screen readers, who hear it). */
      panelMask.appendChild(h("p", { "class": "lbx-cellinfo", "aria-hidden": "true", "data-cellinfo": "" }));
      panelMask.appendChild(legend());
      markSelection();
      placeTabStop();
    }

    /* The marks of the selected row (read, sink, target) and of its key headers. */
    function markSelection() {
      var sel = s.row, selI = sel === null ? -1 : s.offset + sel;
      var readCols = {};
      if (sel !== null) {
        for (var j = 0; j < s.T; j++) if (cellState(s, sel, j, s.T, s.padding[s.sequence], s.offset).allowed) readCols[j] = true;
      }
      Array.prototype.forEach.call(panelMask.querySelectorAll("thead th[data-col]"), function (th) {
        var col = +th.getAttribute("data-col");
        th.setAttribute("data-read", sel !== null && !!readCols[col] ? "true" : "false");
        th.setAttribute("data-target", sel !== null && hasTarget(selI) && col === selI + 1 ? "true" : "false");
      });
      Array.prototype.forEach.call(panelMask.querySelectorAll("tbody tr[data-row]"), function (tr) {
        var r = +tr.getAttribute("data-row"), on = r === sel, i = s.offset + r;
        tr.setAttribute("data-selected", on ? "true" : "false");
        tr.setAttribute("aria-selected", on ? "true" : "false");
        tr.querySelector("button.lbx-q").setAttribute("aria-pressed", on ? "true" : "false");
        Array.prototype.forEach.call(tr.querySelectorAll("td"), function (td) {
          var col = +td.getAttribute("data-col"), mark = "";
          if (on) {
            if (hasTarget(i) && col === i + 1) mark = "target";
            else if (td.getAttribute("data-allowed") === "true") mark = td.getAttribute("data-reason") === "sink" ? "sink" : "read";
          }
          td.setAttribute("data-mark", mark);
        });
      });
    }

    function gridItem(r, c) {
      var tr = panelMask.querySelector('tbody tr[data-row="' + r + '"]');
      if (!tr) return null;
      return c < 0 ? tr.querySelector("button.lbx-q") : tr.querySelector('td[data-col="' + c + '"]');
    }

    /* Exactly one element of the grid is in the Tab order: the last one focused (first the query button of
     * the selected row, or of row 0). */
    function placeTabStop() {
      focusAt.r = clamp(focusAt.r, 0, s.T - s.offset - 1);
      focusAt.c = clamp(focusAt.c, -1, s.T - 1);
      Array.prototype.forEach.call(panelMask.querySelectorAll('.lbx-grid [tabindex="0"]'), function (node) {
        node.setAttribute("tabindex", "-1");
      });
      var item = gridItem(focusAt.r, focusAt.c);
      if (item) item.setAttribute("tabindex", "0");
      return item;
    }

    function focusCell(r, c) {
      focusAt.r = r;
      focusAt.c = c;
      var item = placeTabStop();
      if (item) item.focus();
    }

    function showCellInfo(target) {
      var info = panelMask.querySelector("[data-cellinfo]");
      if (!info) return;
      var td = target && target.closest ? target.closest("td[data-col]") : null;
      info.textContent = td ? td.getAttribute("aria-label") : "";
    }

    function renderWorked() {
      var ex = workedExample(s, cfg.Q, cfg.K);
      panelWorked.textContent = "";
      panelWorked.appendChild(h("p", { "class": "lbx-note", text: tx.worked_note }));
      var anyLeak = false, anyNaN = false;
      [["scores", tx.worked_scores, ex.scores, fmtScore], ["weights", tx.worked_weights, ex.weights, fmtWeight]].forEach(function (spec) {
        var head = [h("th", { scope: "col", "class": "lbx-corner", text: tx.corner })];
        for (var j = 0; j < 3; j++) head.push(h("th", { scope: "col", text: "k" + j }));
        var rows = spec[2].map(function (row, r) {
          return h("tr", {}, [h("th", { scope: "row", text: "q" + (ex.offset + r) })].concat(row.map(function (x, j) {
            var st = ex.states[r][j];
            if (spec[0] === "weights" && st.leak && x > 0) anyLeak = true;
            if (spec[0] === "weights" && isNaN(x)) anyNaN = true;
            /* Grey alone would say "blocked" (and pink "leak") by colour only: the name says it in words,
             * and the CSS adds the grid's symbol after the number. */
            var why = !st.allowed ? tx["legend_" + st.reason] : st.leak ? tx.legend_leak : null;
            return h("td", { "data-row": r, "data-col": j, "data-allowed": st.allowed, "data-reason": st.reason,
              "data-leak": st.leak, "data-value": isNaN(x) ? "NaN" : x === -Infinity ? "-inf" : x.toFixed(4),
              "aria-label": why ? spec[3](x) + " (" + why + ")" : null, text: spec[3](x) });
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

    /* Same as explorer.grid_summary: what a change of the controls did to the whole grid. */
    function gridSummary() {
      var pad = s.padding[s.sequence], rows = s.T - s.offset, read = 0, total = 0, sinks = 0, empty = 0;
      var leaks = 0, targets = 0, blocked = {};
      for (var r = 0; r < rows; r++) {
        var rowReads = 0;
        for (var j = 0; j < s.T; j++) {
          var c = cellState(s, r, j, s.T, pad, s.offset);
          total++;
          if (c.allowed) { read++; rowReads++; } else blocked[c.reason] = (blocked[c.reason] || 0) + 1;
          if (c.reason === "sink") sinks++;
          if (c.leak) leaks++;
          if (c.leak === "target") targets++;
        }
        if (!rowReads) empty++;
      }
      var parts = [fmt(tx.status_grid, { rows: rows, T: s.T, read: read, blocked: total - read })];
      var counts = BLOCKED_REASONS.filter(function (reason) { return blocked[reason]; }).map(function (reason) {
        return fmt(tx["count_" + reason], { n: blocked[reason] });
      });
      if (counts.length) parts.push(fmt(tx.status_blocked, { reasons: counts.join(", ") }));
      if (sinks) parts.push(fmt(tx.status_grid_sinks, { n: sinks }));
      if (empty) parts.push(fmt(tx.status_grid_empty, { n: empty }));
      if (leaks) parts.push(fmt(tx.status_grid_leak, { n: leaks, own: targets }));
      return parts.join(" ");
    }

    function statusText() {
      if (s.row === null) return changed ? gridSummary() : tx.pick;
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

    function render() {
      var pad = s.padding[s.sequence];
      tabs.forEach(function (tab) {
        var on = tab.getAttribute("data-view") === s.view;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.setAttribute("tabindex", on ? "0" : "-1");
      });
      panelMask.hidden = s.view !== "mask";
      panelWorked.hidden = s.view !== "worked";
      var gridHadFocus = panelMask.contains(document.activeElement) && !!document.activeElement.closest(".lbx-grid");
      renderGrid();
      renderWorked();
      if (gridHadFocus) focusCell(focusAt.r, focusAt.c);
      announce();
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
    }

    function announce() {
      var text = statusText();
      // the same text again is not news: leave the live region alone
      if (status.textContent !== text) status.textContent = text;
    }

    /* A row selected from the grid: only marks and the status change, the cells (and focus) stay. */
    function select(r) {
      s.row = r;
      markSelection();
      announce();
      rev += 1;
      root.setAttribute("data-selected-row", s.row === null ? "" : s.row);
      root.setAttribute("data-rev", rev);
    }

    /* ---- state changes */
    function fixRanges() {
      s.T = clamp(s.T, T_MIN, T_MAX);
      s.padding = wanted.padding.map(function (p) { return clamp(p, 0, s.T - 1); });
      s.offset = clamp(wanted.offset, 0, s.T - 1);
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
      else if (control === "padding") wanted.padding[+input.getAttribute("data-seq")] = Math.max(value, 0);
      else if (control === "window") s.window = value;
      else if (control === "sinks") s.sinks = value;
      else if (control === "offset") { wanted.offset = Math.max(value, 0); s.row = null; }
      changed = true;
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
      changed = true;
      fixRanges();
      render();
    });
    panelMask.addEventListener("click", function (event) {
      var row = event.target.closest("tr[data-row]");
      if (!row || !panelMask.contains(row)) return;
      var td = event.target.closest("td[data-col]");
      focusCell(+row.getAttribute("data-row"), td ? +td.getAttribute("data-col") : -1);
      select(+row.getAttribute("data-row"));
    });
    panelMask.addEventListener("focusin", function (event) {
      var item = event.target.closest(".lbx-grid button.lbx-q, .lbx-grid td[data-col]");
      if (!item) return;
      var td = item.closest("td[data-col]");
      focusAt.r = +item.closest("tr[data-row]").getAttribute("data-row");
      focusAt.c = td ? +td.getAttribute("data-col") : -1;
      placeTabStop();
      showCellInfo(event.target);
    });
    panelMask.addEventListener("focusout", function () { showCellInfo(null); });
    /* Arrow keys move the focus and select the row they land on (as the query buttons always did);
     * Home/End go along the row, Ctrl+Home/Ctrl+End to the first and the last cell. */
    panelMask.addEventListener("keydown", function (event) {
      var item = event.target.closest(".lbx-grid button.lbx-q, .lbx-grid td[data-col]");
      if (!item) return;
      var td = item.closest("td[data-col]");
      var r = +item.closest("tr[data-row]").getAttribute("data-row"), c = td ? +td.getAttribute("data-col") : -1;
      var lastRow = s.T - s.offset - 1, lastCol = s.T - 1, key = event.key, ctrl = event.ctrlKey || event.metaKey;
      if (key === "ArrowDown") r = Math.min(r + 1, lastRow);
      else if (key === "ArrowUp") r = Math.max(r - 1, 0);
      else if (key === "ArrowRight") c = Math.min(c + 1, lastCol);
      else if (key === "ArrowLeft") c = Math.max(c - 1, -1);
      else if (key === "Home") { c = -1; if (ctrl) r = 0; }
      else if (key === "End") { c = lastCol; if (ctrl) r = lastRow; }
      else if ((key === "Enter" || key === " ") && td) { event.preventDefault(); select(r); return; }
      else return;
      event.preventDefault();
      event.stopPropagation();  // the grid's keys, Ctrl+Home/End included, are not the host page's shortcuts
      focusCell(r, c);
      if (s.row !== r) select(r);
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
