/* Grouped checkboxes (apps/catalog/choices.py): a "Choose all" / "Clear" button in each group,
 * and the group's count kept up to date. Without JavaScript the checkboxes work alone. */
(function () {
  "use strict";
  function boxes(group) {
    return Array.prototype.slice.call(group.querySelectorAll(".check-list input[type=checkbox]"));
  }
  function refresh(group) {
    var all = boxes(group);
    var chosen = all.filter(function (box) { return box.checked; }).length;
    group.querySelector("summary small").textContent =
      chosen ? chosen + " of " + all.length + " chosen" : String(all.length);
    group.querySelector("button[data-choose-all]").textContent =
      chosen === all.length ? "Clear this group" : "Choose all in this group";
  }
  document.querySelectorAll("[data-check-groups] details.check-group").forEach(function (group) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "quiet small";
    button.setAttribute("data-choose-all", "");
    group.querySelector("summary").insertAdjacentElement("afterend", button);
    button.addEventListener("click", function () {
      var all = boxes(group);
      var every = all.every(function (box) { return box.checked; });
      all.forEach(function (box) { box.checked = !every; });
      /* as a click on a box would: the page's other scripts (applies_to.js) follow it */
      if (all.length) all[0].dispatchEvent(new Event("change", { bubbles: true }));
      refresh(group);
    });
    group.addEventListener("change", function () { refresh(group); });
    refresh(group);
  });
})();
