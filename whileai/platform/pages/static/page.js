// The Runs pages' small script: draw every chart from its JSON, and the copy-for-agent button.
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
  document.addEventListener("DOMContentLoaded", function () { draw(); copyButtons(); });
})();
