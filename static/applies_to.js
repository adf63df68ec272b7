/* Groups of a form that apply to one kind only (data-applies-to="llm"): shown, and sent, only
   when the control named by the form's data-kind-from is of that kind (its chosen option's
   data-kind, or its value). Without JavaScript every group shows and the server ignores the
   fields that do not apply. */
(() => {
  document.querySelectorAll("form[data-kind-from]").forEach((form) => {
    /* getAttribute: form.dataset would be the form's own "dataset" field, where it has one */
    const control = form.elements.namedItem(form.getAttribute("data-kind-from"));
    if (!control) return;
    const update = () => {
      const option = control.selectedOptions ? control.selectedOptions[0] : null;
      const kind = option ? option.dataset.kind || option.value : "";
      form.querySelectorAll("[data-applies-to]").forEach((group) => {
        const off = kind !== "" && !group.dataset.appliesTo.split(" ").includes(kind);
        group.hidden = off;
        group.disabled = off;
      });
    };
    control.addEventListener("change", update);
    update();
  });
})();
