/* On a phone or a small tablet the open panel covers the whole screen: the page behind it is
   out of reach. */

// The width up to which chat.css makes the panel a full-screen sheet (no readable column fits
// beside it); keep the two equal.
const PHONE = "(max-width: 731px)";

export class Sheet {
  /** `panel` is the dialog; `root` holds it and the launcher (which the sheet covers too). */
  constructor(root, panel, launcher) {
    this.root = root;
    this.panel = panel;
    this.launcher = launcher;
    this.phone = window.matchMedia(PHONE);
    // Turning the phone (or resizing a window) across the width changes what is covered.
    this.phone.addEventListener("change", () => this.update());
  }

  /** Modal while it covers the page: Tab and a screen reader stay in the panel, since what
   * they would reach behind it cannot be seen. Beside the page (wider screens) it is not. */
  update() {
    const covering = this.covering;
    this.panel.setAttribute("aria-modal", String(covering));
    for (const node of this.behind()) node.inert = covering;
  }

  get covering() {
    return !this.panel.hidden && this.phone.matches;
  }

  behind() {
    const page = [...document.body.children].filter((node) => node !== this.root);
    return [...page, this.launcher];
  }
}
