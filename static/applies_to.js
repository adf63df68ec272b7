/* Groups of a form that apply to one kind only (data-applies-to="llm"): shown, and sent, only
   when the control named by the form's data-kind-from is of that kind: a select's chosen
   option (its data-kind, or its value), or any ticked checkbox of that name (its data-kind).
   Nothing chosen: every group shows. Without JavaScript every group shows and the server
   ignores the fields that do not apply. */
(() => {
  document.querySelectorAll("form[data-kind-from]").forEach((form) => {
    /* getAttribute: form.dataset would be the form's own "dataset" field, where it has one */
    const name = form.getAttribute("data-kind-from");
    const control = form.elements.namedItem(name);
    if (!control) return;
    const chosen = () => {
      if (control.selectedOptions) {
        const option = control.selectedOptions[0];
        return option && (option.dataset.kind || option.value) ? [option.dataset.kind || option.value] : [];
      }
      const boxes = control instanceof RadioNodeList ? [...control] : [control];
      return boxes.filter((box) => box.checked).map((box) => box.dataset.kind || box.value);
    };
    const update = () => {
      const kinds = chosen();
      form.querySelectorAll("[data-applies-to]").forEach((group) => {
        const wanted = group.dataset.appliesTo.split(" ");
        const off = kinds.length > 0 && !kinds.some((kind) => wanted.includes(kind));
        group.hidden = off;
        group.disabled = off;
      });
    };
    form.addEventListener("change", (event) => {
      if (event.target.name === name) update();
    });
    update();
  });
  /* A field that applies only when a box is ticked (data-shown-with="field:box ..." on the
     form): hidden while the box is clear (still sent: the server ignores it then). */
  document.querySelectorAll("form[data-shown-with]").forEach((form) => {
    const pairs = form.getAttribute("data-shown-with").split(" ").map((pair) => pair.split(":"));
    const update = () => {
      pairs.forEach(([field, box]) => {
        const wrapper = form.querySelector(`#field-${field}`);
        const ticked = form.elements.namedItem(box);
        if (!wrapper || !ticked) return;
        wrapper.hidden = !ticked.checked;
      });
    };
    form.addEventListener("change", update);
    update();
  });
})();
