"""The explorer's controls: position slider (labelled with the window's real dates), Play /
Pause with a speed, step size, direction, a far jump, and the from-scratch button.

Why Play does not drive the slider directly (``jslink``): each tick must move by the step size
in the chosen direction, backward too, and stop at the ends, which only the kernel knows.  So
Play's value is a tick counter; every tick the kernel moves the window once.  While the kernel
is busy the frontend sends only the latest tick count (ipywidgets 8 coalescing), and the
explorer moves from where the engine is straight to where all those ticks lead, in one move,
so stale moves never queue (and the status line says how many ticks were merged).
"""
from __future__ import annotations

import ipywidgets as w

__all__ = ["Controls"]


class Controls:
    """The control widgets; the explorer observes them (tests set their values)."""

    def __init__(self, steps: int, position: int, *, interval_ms: int = 400):
        self.slider = w.IntSlider(value=max(position, 0), min=0, max=max(steps - 1, 0), step=1,
                                  description="window", continuous_update=False,
                                  readout=True, layout=w.Layout(width="100%"),
                                  style={"description_width": "initial"})
        self.slider.add_class("ddlab-slider")
        self.play = w.Play(value=0, min=0, max=10**9, step=1, interval=interval_ms,
                           show_repeat=False, description="play")
        self.play.add_class("ddlab-play")
        self.speed = w.BoundedIntText(value=interval_ms, min=20, max=10_000, step=50,
                                      description="ms/move", layout=w.Layout(width="150px"),
                                      style={"description_width": "initial"})
        self.speed.add_class("ddlab-speed")
        w.link((self.speed, "value"), (self.play, "interval"))
        self.step_size = w.BoundedIntText(value=1, min=1, max=max(steps, 1), description="step",
                                          layout=w.Layout(width="110px"),
                                          style={"description_width": "initial"})
        self.step_size.add_class("ddlab-step")
        self.direction = w.ToggleButtons(options=[("◀ backward", -1), ("forward ▶", 1)], value=1,
                                         style={"button_width": "90px"})
        self.direction.add_class("ddlab-direction")
        self.jump_to = w.BoundedIntText(value=max(position, 0), min=0, max=max(steps - 1, 0),
                                        description="jump to", layout=w.Layout(width="150px"),
                                        style={"description_width": "initial"})
        self.jump = w.Button(description="jump", tooltip="go there in one combined epoch",
                             layout=w.Layout(width="60px"))
        self.jump.add_class("ddlab-jump")
        self.reference = w.Button(description="from scratch", icon="refresh",
                                  tooltip="compute this window from scratch: the reference "
                                          "lines of the iteration plot",
                                  layout=w.Layout(width="130px"))
        self.reference.add_class("ddlab-reference")
        self.window_label = w.HTML()
        self.window_label.add_class("ddlab-window")
        self.box = w.VBox([
            w.HBox([self.slider], layout=w.Layout(width="100%")),
            w.HBox([self.play, self.speed, self.step_size, self.direction, self.jump_to,
                    self.jump, self.reference],
                   layout=w.Layout(flex_flow="row wrap", align_items="center")),
        ])

    def show_position(self, position: int, span: str) -> None:
        """Label the slider with the window's real dates/times (``span``)."""
        self.slider.description = f"window {span}" if position >= 0 else "window (empty)"
        if position >= 0:
            self.jump_to.value = position

    def next_target(self, position: int, ticks: int = 1) -> int:
        """Where ``ticks`` Play ticks go from ``position`` (clamped to the ends)."""
        target = position + self.direction.value * self.step_size.value * ticks
        return min(max(target, self.slider.min), self.slider.max)
