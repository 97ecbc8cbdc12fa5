/* placeholder: to be written */
typedef int stc_placeholder_region_id_;
