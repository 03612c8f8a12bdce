// Zoom, pan and fit for the drawing (issue 30 item 6: a 19-node graph overflowed a 1440x900
// window with no way to see it whole). The svg fills its pane; its `g.scene` (graph.js) is
// moved by one transform. Until the user zooms or pans, every redraw and resize fits the
// drawing (never enlarged past 100%); after, the view stays where they put it until Fit or
// another assistant.

const MIN = 0.1;
const MAX = 4;
const STEP = 1.25; // one button press
const PAD = 16;
const DRAG = 3; // px a press must move to pan instead of click

const clamp = (k) => Math.min(MAX, Math.max(MIN, k));

export class Viewport {
  constructor(svg) {
    this.svg = svg;
    this.k = 1;
    this.x = 0;
    this.y = 0;
    this.auto = true; // fit on every redraw until the user moves the view
    this.wire();
  }

  /** After a redraw: fit while `auto`, else keep the user's view. `reset`: a new graph. */
  drawn(reset = false) {
    if (reset) this.auto = true;
    if (this.auto) this.fit();
    else this.apply();
  }

  /** The whole drawing in view, centred across, from the top; at most 100%. */
  fit() {
    this.auto = true;
    const scene = this.scene();
    const { width, height } = this.size();
    if (!scene || !width || !height) return;
    const box = scene.getBBox();
    this.k = clamp(Math.min(1, (width - 2 * PAD) / (box.width || 1), (height - 2 * PAD) / (box.height || 1)));
    this.x = (width - box.width * this.k) / 2 - box.x * this.k;
    this.y = Math.max(PAD, (height - box.height * this.k) / 2) - box.y * this.k;
    this.apply();
  }

  /** Zoom by `factor` keeping the point (px, py) of the svg where it is (default: the centre). */
  zoom(factor, px, py) {
    const { width, height } = this.size();
    const cx = px ?? width / 2;
    const cy = py ?? height / 2;
    const k = clamp(this.k * factor);
    this.x = cx - ((cx - this.x) * k) / this.k;
    this.y = cy - ((cy - this.y) * k) / this.k;
    this.k = k;
    this.auto = false;
    this.apply();
  }

  zoomIn() {
    this.zoom(STEP);
  }

  zoomOut() {
    this.zoom(1 / STEP);
  }

  /** 100%, keeping the centre of the view where it is. */
  actualSize() {
    this.zoom(1 / this.k);
  }

  pan(dx, dy) {
    this.x += dx;
    this.y += dy;
    this.auto = false;
    this.apply();
  }

  scene() {
    return this.svg.querySelector(".scene");
  }

  size() {
    return { width: this.svg.clientWidth, height: this.svg.clientHeight };
  }

  apply() {
    this.scene()?.setAttribute("transform", `translate(${this.x},${this.y}) scale(${this.k})`);
    this.svg.dataset.zoom = this.k.toFixed(3); // for the tests and the zoom readout
    this.onChange?.(this.k);
  }

  wire() {
    const svg = this.svg;
    svg.addEventListener("wheel", (e) => {
      e.preventDefault(); // the page must not scroll under the drawing
      const r = svg.getBoundingClientRect();
      const lines = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? r.height : 1;
      this.zoom(Math.exp(-e.deltaY * lines * 0.0015), e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    this.wirePan();
    new ResizeObserver(() => this.auto && this.fit()).observe(svg);
  }

  /** Drag anywhere to pan; a press that moved is not a click (a dot under the release stays). */
  wirePan() {
    const svg = this.svg;
    let press = null;
    let moved = false;
    svg.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      press = { x: e.clientX, y: e.clientY, id: e.pointerId };
      moved = false;
    });
    svg.addEventListener("pointermove", (e) => {
      if (!press || e.pointerId !== press.id) return;
      const dx = e.clientX - press.x;
      const dy = e.clientY - press.y;
      if (!moved && Math.hypot(dx, dy) < DRAG) return;
      if (!moved) svg.setPointerCapture(e.pointerId);
      moved = true;
      svg.classList.add("panning");
      press.x = e.clientX;
      press.y = e.clientY;
      this.pan(dx, dy);
    });
    const end = () => {
      press = null;
      svg.classList.remove("panning");
    };
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
    svg.addEventListener("click", (e) => {
      if (moved) e.stopPropagation();
      moved = false;
    }, true);
  }
}
