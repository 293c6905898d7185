/* Stand-ins for onlinews' region calls in the scenario programs built
 * without onlinews (<program>_plain, same-as-plain and needs-plain in
 * run_scenario.py): they do nothing, as onlinews' regions do for MPI. */
#include <onlinews.h>
void onlinews_region_begin(const char* name) { (void)name; }
void onlinews_region_end(const char* name) { (void)name; }
