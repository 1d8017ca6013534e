/* work in progress */ typedef int hml_wip_region;
