"""Drawing style of the 3-D views: glyph sizes [mm], colours, cameras (not anatomy)."""

from __future__ import annotations

# ---- drawing style (not anatomy): sizes of glyphs [mm], colours
ARROW_MM_PER_N = 0.3           # contact-force arrow length per newton [mm/N]
ARROW_MAX_MM = 30.0            # longer arrows are clipped to this length [mm]
ARROW_SHAFT_MM = 0.7           # shaft radius [mm]
ARROW_HEAD_MM = 1.8            # head radius [mm]
LIGAMENT_TAUT_MM = 1.0         # tube radius of a ligament under tension [mm]
LIGAMENT_SLACK_MM = 0.35       # tube radius of a slack ligament [mm]
FACET_DEPTH_MM = 1.2           # thickness of the drawn facet cylinders behind the face [mm]
PILLAR_RADIUS_FRACTION = 0.92  # articular pillar radius / facet radius (facets stand proud)
DISC_BULGE_MM = 0.6            # outward bulge of the drawn disc at mid-height [mm]
RING = 32                      # points per ring of the lofted bone surfaces
TUBE_RING = 12                 # points per ring of ligament tubes and arrows
RUPTURED_STUB = 0.3            # torn stub length / strip length, drawn from each insertion
HALO_RADIUS_FRACTION = 1.35    # dislocation halo radius / facet radius
LABEL_OFFSET_MM = (-6.0, 10.0, 12.0)   # facet label from the facet centre (y, z: x side)

BONE_C6 = "#c8b68e"
BONE_C5 = "#f2e8cf"
GHOST = "#5d8aa8"
GHOST_OPACITY = 0.18
BONE_SPECULAR = 0.3            # a little gloss: the shape of the bone reads from its highlights
SSAO_RADIUS_MM = 3.0           # ambient occlusion (VTK's SSAO) darkens creases and joints
MAGNIFIED_COLOR = "#ff7f0e"    # the magnified C5 (display only)
MAGNIFIED_OPACITY = 0.55
DISC_COLOR = "#6fa8dc"
FACET_COLOR = "#2e86c1"
ARROW_COLOR = "#d62728"
SLACK_COLOR = "#9a9a9a"
RUPTURED_COLOR = "#111111"
DISLOCATED_COLOR = "#e41a1c"
TENSION_CMAP = "plasma"
TENSION_STOPS = ("#0d0887", "#4c02a1", "#7e03a8", "#a92395", "#cc4778", "#e56b5d", "#f89540",
                 "#fdc328", "#f0f921")
"""matplotlib's plasma at 0, 1/8, ..., 1 (CC0): the browser explorer's tension colours,
interpolated linearly (tests hold them to matplotlib's map)."""
DEFAULT_SIZE = (1200, 900)
CAMERA_VIEW_ANGLE_DEG = 30.0   # vertical field of view of the renders [deg]
CAMERA_MARGIN = 1.3            # the vertebrae's outline fills 1 / 1.3 of the picture's height
AXIS_LABEL_MIN_SCREEN = 0.5    # an orientation axis shorter than this on screen is not labelled
LEGEND = "\nred arrows: facet force on C5; blue ghost: C5 unloaded"

VIEWS = {
    # camera direction (from the focal point towards the eye) and view-up, C6 axes
    "oblique": ((-0.75, 0.85, 0.4), (0.0, 0.0, 1.0)),
    # from the left, 14 deg in front of the true lateral and 8 deg above it: the transverse
    # processes, which project in front of the articular pillars, would hide the bodies
    "lateral": ((0.25, 1.0, 0.15), (0.0, 0.0, 1.0)),
    "posterior": ((-1.0, 0.25, 0.35), (0.0, 0.0, 1.0)),
    "anterior": ((1.0, 0.0, 0.15), (0.0, 0.0, 1.0)),
    "superior": ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)),
}
# "auto": the view that shows a case's main motion best: lateral (from the left) for the
# sagittal motions x, z, phi_y; posterior for y, phi_x, phi_z, where both facets matter.
AUTO_VIEW_BY_DOF = ("lateral", "posterior", "lateral", "posterior", "lateral", "posterior")
