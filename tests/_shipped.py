"""The bounds this project ships, each with a fixed figure style (workflow/scripts/figstyle.py
``METHODS``) and a row in the README's table of bounds.

A bound a user adds (docs/adding_a_baseline.md: one module and one import line) is not in this
list: it draws with the style derived from its name and may stay out of the README's table, so
the suite passes without a third file.  A bound the project itself ships is added here, with
its style and its README row."""

SHIPPED_BOUNDS = (
    "gdp", "liu23_personalized", "liu24", "variation_ratio_claimed", "blanket_hoeffding",
    "blanket_bennett", "clones", "blanket", "efmrtt19", "fmt21_closed", "fmt21_numerical",
    "fmt23_closed", "fmt23_numerical", "rr_upper", "tightest", "variation_ratio", "krr_exact",
    "lr_sum_lower", "rr_exact", "tier_sum_lower", "window_lower",
)
