/* placeholder: to be written */
typedef int stc_placeholder_profile_;
