/* placeholder: to be written */
typedef int stc_placeholder_hash_;
