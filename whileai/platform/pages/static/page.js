// The Runs pages' small script: draw every chart from its JSON, the copy-for-agent button, and the
// run explorer's filters, overlay and config toggle.
// The tables read without it; charts need it (plotly.js-basic, served from /static).
(function () {
  "use strict";
  function draw() {
    var nodes = document.querySelectorAll("div.chart[data-figure]");
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      var source = document.getElementById(node.getAttribute("data-figure"));
      if (!source || typeof Plotly === "undefined") continue;
      var fig = JSON.parse(source.textContent);
      var layout = fig.layout || {};
      delete layout.width;  // fill the grid cell
      layout.autosize = true;
      Plotly.newPlot(node, fig.data, layout, {displaylogo: false, responsive: true});
    }
  }
  function copyButtons() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].hidden = false;
      buttons[i].addEventListener("click", function (event) {
        var button = event.currentTarget;
        var text = JSON.parse(document.getElementById(button.getAttribute("data-copy")).textContent);
        var status = document.getElementById(button.getAttribute("aria-describedby"));
        navigator.clipboard.writeText(text).then(function () {
          if (status) status.textContent = "copied";
        }, function () {
          if (status) status.textContent = "copy failed: select the text below and copy it";
        });
      });
    }
  }
  // The run explorer (GET /runs): the filters hide rows as they change, by the same rule as the
  // server's (whileai.platform._page.run_shown): a picked run always shows; an archived one only when
  // asked; the search is a case-insensitive substring of the row's text; agent, version, state exact.
  function filterRuns() {
    var table = document.getElementById("explore-table");
    if (!table) return;
    var q = document.getElementById("f-q").value.toLowerCase();
    var agent = document.getElementById("f-agent").value;
    var version = document.getElementById("f-version").value;
    var state = document.getElementById("f-state").value;
    var archived = document.getElementById("f-archived").checked;
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], d = r.dataset;
      var picked = r.querySelector("input[name=pick]").checked;
      var show = picked || ((archived || d.archived !== "true") && (!q || d.text.indexOf(q) >= 0) &&
        (!agent || d.agent === agent) && (!version || d.version === version) && (!state || d.state === state));
      r.hidden = !show;
      if (show) shown++;
    }
    document.getElementById("shown-count").textContent = shown + " of " + rows.length + " run(s) shown";
  }
  // Exponential moving average with weight w, debiased at the start (TensorBoard's scalar smoothing);
  // gaps (null) stay gaps.
  function smooth(values, w) {
    if (!w) return values;
    var out = [], last = 0, n = 0;
    for (var i = 0; i < values.length; i++) {
      var v = values[i];
      if (v === null || v === undefined) { out.push(null); continue; }
      n++;
      last = last * w + (1 - w) * v;
      out.push(last / (1 - Math.pow(w, n)));
    }
    return out;
  }
  function drawOverlay() {
    var node = document.getElementById("overlay");
    var source = document.getElementById("compare-json");
    if (!node || !source || typeof Plotly === "undefined") return;
    var data = JSON.parse(source.textContent);
    var metric = document.getElementById("c-metric").value;
    var w = parseFloat(document.getElementById("c-smooth").value) || 0;
    document.getElementById("c-smooth-value").textContent = w.toFixed(2);
    var from = document.getElementById("c-from").value, to = document.getElementById("c-to").value;
    var traces = [], runs = 0;
    for (var i = 0; i < data.series.length; i++) {
      var s = data.series[i];
      if (s.metric !== metric) continue;
      traces.push({type: "scatter", mode: "lines", name: s.label + " (" + s.run_id + ")", x: s.steps,
                   y: smooth(s.values, w), line: {color: data.colors[runs % data.colors.length], width: 2},
                   hovertemplate: s.label + " step %{x}: %{y:.4g}<extra></extra>"});
      runs++;
    }
    var xaxis = {title: {text: "step"}};
    if (from !== "" || to !== "") {
      var steps = [].concat.apply([], traces.map(function (t) { return t.x; }));
      xaxis.range = [from !== "" ? +from : Math.min.apply(null, steps), to !== "" ? +to : Math.max.apply(null, steps)];
    }
    node.setAttribute("data-traces", String(traces.length));
    document.getElementById("overlay-caption").textContent = metric + " by step, one line per picked run that logged it" +
      (w ? " (smoothed, weight " + w.toFixed(2) + ")" : "");
    Plotly.react(node, traces, {title: {text: metric}, height: data.height, margin: data.margin, xaxis: xaxis,
                                yaxis: {title: {text: metric}, exponentformat: "e"}, showlegend: true,
                                legend: {orientation: "h", y: -0.25}, autosize: true},
                 {displaylogo: false, responsive: true});
  }
  function explore() {
    var form = document.getElementById("explore-form");
    if (!form) return;
    ["f-q", "f-agent", "f-version", "f-state", "f-archived"].forEach(function (id) {
      var el = document.getElementById(id);
      el.addEventListener("input", filterRuns);
      el.addEventListener("change", filterRuns);
    });
    filterRuns();
    ["c-metric", "c-smooth", "c-from", "c-to"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.addEventListener("input", drawOverlay); el.addEventListener("change", drawOverlay); }
    });
    drawOverlay();
    var differs = document.getElementById("c-differs");
    if (differs) differs.addEventListener("change", function () {
      var rows = document.querySelectorAll("#config-table tbody tr.same");
      for (var i = 0; i < rows.length; i++) rows[i].hidden = differs.checked;
    });
  }
  document.addEventListener("DOMContentLoaded", function () { draw(); copyButtons(); explore(); });
})();
