"""The Monash archive catalogue: the facts fwbench needs about each dataset, as CSV text inside the package (so it
ships with every install; a data file would need package-data configuration).

Where the facts come from (copied on 2026-11-21):
- ``name, frequency, horizon (= Monash prediction length), context_length (= Monash lag), seasonality, n_series,
  min_length, max_length, in_2024_post, tsf_file``: ``shared/reference/monash_datasets.csv`` (the Monash paper's
  appendix tables and the 2024 post's dataset list). Rows the reference leaves blank because the 2024 post did not use
  them: m3_other gets context 2 (its Monash lag), horizon 8, yearly frequency, seasonality 1 (the value that
  reproduces Monash's published SES MASE, shared/data/SOURCES.md C1); kaggle_web_traffic_daily has no Monash lag, so
  no context length (it cannot be run until one is chosen).
- ``freq``: the reference's ``gluonts_freq`` written as a current pandas alias (1Y -> Y, 1W -> W, 1D -> D, 1H -> h).
- ``per_series_horizon``: cif_2016's file has no ``@horizon`` line but a ``horizon`` attribute per series
  (57 series 12, 15 series 6; shared/data/SOURCES.md B1).
- ``zenodo_record, zenodo_zip``: the archive's Zenodo records (https://zenodo.org/record/<record>/files/<zip>),
  the same records gluonts' ``dataset/repository/_tsf_datasets.py`` lists, plus the M3/M4/bitcoin/traffic/us_births
  records of the archive's download list.
- ``staged_file, staged_kind, staged_n_series, staged_sha256``: the copy staged in ``$FWBENCH_DATA_DIR/monash``
  (``MANIFEST.csv`` of shared/data; kind original or rebuilt, see SOURCES.md B and C), with the sha256 of the bytes
  staged on 2026-11-21. Used to recognise the staged files and to tell a truncated copy from a complete one.
"""

CATALOGUE_CSV = """\
dataset,name,frequency,freq,horizon,context_length,seasonality,n_series,min_length,max_length,per_series_horizon,in_2024_post,tsf_file,zenodo_record,zenodo_zip,staged_file,staged_kind,staged_n_series,staged_sha256
m1_yearly,M1 Yearly,yearly,Y,6,2,1,181,15,58,no,yes,m1_yearly_dataset.tsf,4656193,m1_yearly_dataset.zip,tsf/m1_yearly_dataset.tsf,original,181,82b0edb6ce4d70098cbe6a2ac0aa6e14301c113dc256a9b3170b8e9fdd26f1de
m1_quarterly,M1 Quarterly,quarterly,Q,8,5,4,203,18,114,no,yes,m1_quarterly_dataset.tsf,4656154,m1_quarterly_dataset.zip,tsf_rebuilt/m1_quarterly_dataset.tsf,rebuilt,203,08453a0b451b684b91bf07ddeaf8116570674e5ce6a479765592871a491e13ca
m1_monthly,M1 Monthly,monthly,M,18,15,12,617,48,150,no,yes,m1_monthly_dataset.tsf,4656159,m1_monthly_dataset.zip,tsf/m1_monthly_dataset.tsf,original,617,454e7f8db905628c5674da0e03915183def4c37e85f5bfe810e47b416be4dffd
m3_yearly,M3 Yearly,yearly,Y,6,2,1,645,20,47,no,yes,m3_yearly_dataset.tsf,4656222,m3_yearly_dataset.zip,tsf/m3_yearly_dataset.tsf,original,645,104eeb3d0ca7311d6f936d6896d7ddafb57f6dbc986d1aa7ad19415f80faa4ad
m3_quarterly,M3 Quarterly,quarterly,Q,8,5,4,756,24,72,no,yes,m3_quarterly_dataset.tsf,4656262,m3_quarterly_dataset.zip,tsf_rebuilt/m3_quarterly_dataset.tsf,rebuilt,756,290ea09bbb3a034a78444d39765e013a672a9237fbdeef118996c96cef424736
m3_monthly,M3 Monthly,monthly,M,18,15,12,1428,66,144,no,yes,m3_monthly_dataset.tsf,4656298,m3_monthly_dataset.zip,tsf_rebuilt/m3_monthly_dataset.tsf,rebuilt,1428,f6289d90114d45d64a56007e2641ecac30bac8715b4bb4a1387bc486a8b1873d
m3_other,M3 Other,other(yearly-like),Y,8,2,1,174,71,104,no,no,m3_other_dataset.tsf,4656335,m3_other_dataset.zip,tsf_rebuilt/m3_other_dataset.tsf,rebuilt,174,076808bbc474778c1e412f8ea83f9f1b253256f54cbf935afd2605bf4d50b1be
m4_yearly,M4 Yearly,yearly,Y,6,2,1,23000,19,841,no,yes,m4_yearly_dataset.tsf,4656379,m4_yearly_dataset.zip,,unavailable,,
m4_quarterly,M4 Quarterly,quarterly,Q,8,5,4,24000,24,874,no,yes,m4_quarterly_dataset.tsf,4656410,m4_quarterly_dataset.zip,,unavailable,,
m4_monthly,M4 Monthly,monthly,M,18,15,12,48000,60,2812,no,yes,m4_monthly_dataset.tsf,4656480,m4_monthly_dataset.zip,,unavailable,,
m4_weekly,M4 Weekly,weekly,W,13,65,52,359,93,2610,no,yes,m4_weekly_dataset.tsf,4656522,m4_weekly_dataset.zip,tsf_rebuilt/m4_weekly_dataset.tsf,rebuilt,359,d8b085330acf1eb52fe5d5fd74493fbaa5ab6f2d9403c4f13b104fc9cc6073d8
m4_daily,M4 Daily,daily,D,14,9,7,4227,107,9933,no,yes,m4_daily_dataset.tsf,4656548,m4_daily_dataset.zip,,unavailable,,
m4_hourly,M4 Hourly,hourly,h,48,210,24,414,748,1008,no,yes,m4_hourly_dataset.tsf,4656589,m4_hourly_dataset.zip,tsf/m4_hourly_dataset.tsf,original,414,1af11791c37a3a612017cecbfec306842d2bfefbaa0a3e0aea88a8440721c62d
tourism_yearly,Tourism Yearly,yearly,Y,4,2,1,518,11,47,no,yes,tourism_yearly_dataset.tsf,4656103,tourism_yearly_dataset.zip,tsf/tourism_yearly_dataset.tsf,original,518,bfc939573cf65fe5c372af053cb331fb45a18388c4217076d3751b56e8971c08
tourism_quarterly,Tourism Quarterly,quarterly,Q,8,5,4,427,30,130,no,yes,tourism_quarterly_dataset.tsf,4656093,tourism_quarterly_dataset.zip,tsf/tourism_quarterly_dataset.tsf,original,427,d4a157abbc77b5af472c5ceab67ba387c09adcbd6e2c935167b93d994d4338c7
tourism_monthly,Tourism Monthly,monthly,M,24,15,12,366,91,333,no,yes,tourism_monthly_dataset.tsf,4656096,tourism_monthly_dataset.zip,tsf/tourism_monthly_dataset.tsf,original,366,8da743edec2ff2881d862e2e736a52caa9f5cdac45bcf4ce3d72574350fd6f7d
cif_2016,CIF 2016,monthly,M,12,15,12,72,34,120,yes,yes,cif_2016_dataset.tsf,4656042,cif_2016_dataset.zip,tsf/cif_2016_dataset.tsf,original,72,54708e8312b644811f1876c458459620b6d23e0a1c6329b7e057dc5689a3910f
australian_electricity_demand,Aus. Electricity Demand,half_hourly,30min,336,420,48,5,230736,232272,no,yes,australian_electricity_demand_dataset.tsf,4659727,australian_electricity_demand_dataset.zip,,unavailable,,
dominick,Dominick,weekly,W,8,10,52,115704,28,393,no,yes,dominick_dataset.tsf,4654802,dominick_dataset.zip,,unavailable,,
bitcoin,Bitcoin,daily,D,30,9,7,18,2659,4581,no,yes,bitcoin_dataset_without_missing_values.tsf,5122101,bitcoin_dataset_without_missing_values.zip,tsf/bitcoin_dataset_without_missing_values.tsf,original,18,44fc04a7578677d603ec164510ce09fa8917ca004e138c7ece42232bb74c909a
pedestrian_counts,Pedestrian Counts,hourly,h,24,210,24,66,576,96424,no,yes,pedestrian_counts_dataset.tsf,4656626,pedestrian_counts_dataset.zip,,unavailable,,
vehicle_trips,Vehicle Trips,daily,D,30,9,7,329,70,243,no,yes,vehicle_trips_dataset_without_missing_values.tsf,5122537,vehicle_trips_dataset_without_missing_values.zip,tsf_rebuilt/vehicle_trips_dataset_without_missing_values.tsf,rebuilt,329,0bcccc25a8cfa298ffdf926f33bee89dd67fc0381823a9cc2ab27dd7fd071fff
kdd_cup,KDD Cup 2018,hourly,h,168,210,24,270,9504,10920,no,yes,kdd_cup_2018_dataset_without_missing_values.tsf,4656756,kdd_cup_2018_dataset_without_missing_values.zip,,unavailable,,
weather,Weather,daily,D,30,9,7,3010,1332,65981,no,yes,weather_dataset.tsf,4654822,weather_dataset.zip,,unavailable,,
nn5_daily,NN5 Daily,daily,D,56,9,7,111,791,791,no,yes,nn5_daily_dataset_without_missing_values.tsf,4656117,nn5_daily_dataset_without_missing_values.zip,tsf_rebuilt/nn5_daily_dataset_without_missing_values.tsf,rebuilt,111,5538d4353bd7fa998b692433fee10683581ad40c0becd8177f67d340188c5a53
nn5_weekly,NN5 Weekly,weekly,W,8,65,52,111,113,113,no,yes,nn5_weekly_dataset.tsf,4656125,nn5_weekly_dataset.zip,tsf_rebuilt/nn5_weekly_dataset.tsf,rebuilt,111,d2bb169e584ff063aa7b1ffb28cb69adfd2b06d6adc7080a2f9c7fa105bd7a83
kaggle_web_traffic_daily,Kaggle Web Traffic Daily,daily,D,59,,7,145063,803,803,no,no,kaggle_web_traffic_dataset_without_missing_values.tsf,4656075,kaggle_web_traffic_dataset_without_missing_values.zip,tsf/kaggle_web_traffic_dataset_1000_without_missing_values.tsf,original,1000,d792055af2401c86349544b424078e3068dd1ed5031ddaba4fe7a7c8eac12a39
kaggle_web_traffic,Kaggle Web Traffic Weekly,weekly,W,8,10,52,145063,114,114,no,yes,kaggle_web_traffic_weekly_dataset.tsf,4656664,kaggle_web_traffic_weekly_dataset.zip,tsf_rebuilt/kaggle_web_traffic_weekly_dataset_1000.tsf,rebuilt,1000,a6dd8069c3a74af07ba63a8dbb05a8db2af40a4413d80ecf2731b560f40a874e
solar_10_minutes,Solar 10 Minutes,10_minutes,10min,1008,50,144,137,52560,52560,no,yes,solar_10_minutes_dataset.tsf,4656144,solar_10_minutes_dataset.zip,,unavailable,,
solar_weekly,Solar Weekly,weekly,W,5,6,52,137,52,52,no,yes,solar_weekly_dataset.tsf,4656151,solar_weekly_dataset.zip,tsf_rebuilt/solar_weekly_dataset.tsf,rebuilt,137,f6a1a524b0f4eaa85264a98cf638035477e42d9c12109767227c14383e6bb2c0
electricity_hourly,Electricity Hourly,hourly,h,168,30,24,321,26304,26304,no,yes,electricity_hourly_dataset.tsf,4656140,electricity_hourly_dataset.zip,,unavailable,,
electricity_weekly,Electricity Weekly,weekly,W,8,65,52,321,156,156,no,yes,electricity_weekly_dataset.tsf,4656141,electricity_weekly_dataset.zip,tsf/electricity_weekly_dataset.tsf,original,321,93e665a84e96eb84006a865c9f7ae8662b6481c1ef0d913a5cc8b29e7c4558b8
car_parts,Car Parts,monthly,M,12,15,12,2674,51,51,no,yes,car_parts_dataset_without_missing_values.tsf,4656021,car_parts_dataset_without_missing_values.zip,tsf_rebuilt/car_parts_dataset_without_missing_values.tsf,rebuilt,2674,6b8a0e7f5d3521b831f07c6878f5c2cc8f54ce1b86330bd935b6674148b0a2bd
fred_md,FRED-MD,monthly,M,12,15,12,107,728,728,no,yes,fred_md_dataset.tsf,4654833,fred_md_dataset.zip,tsf_rebuilt/fred_md_dataset.tsf,rebuilt,107,01a6c29eb7d8b21e44029cfc69931372e30390c356a1f7cbedad6347bf68aa18
traffic_hourly,Traffic Hourly (San Francisco),hourly,h,168,30,24,862,17544,17544,no,yes,traffic_hourly_dataset.tsf,4656132,traffic_hourly_dataset.zip,,unavailable,,
traffic_weekly,Traffic Weekly (San Francisco),weekly,W,8,65,52,862,104,104,no,yes,traffic_weekly_dataset.tsf,4656135,traffic_weekly_dataset.zip,tsf_rebuilt/traffic_weekly_dataset.tsf,rebuilt,862,8bd936e49f4a44753c956bd321bc4c645fe3432ed90311cc16e2113e8b430524
rideshare,Rideshare,hourly,h,168,210,24,2304,541,541,no,yes,rideshare_dataset_without_missing_values.tsf,5122232,rideshare_dataset_without_missing_values.zip,,unavailable,,
hospital,Hospital,monthly,M,12,15,12,767,84,84,no,yes,hospital_dataset.tsf,4656014,hospital_dataset.zip,tsf/hospital_dataset.tsf,original,767,b84c2d28f5154958cb31229a8db1b79eaba9b2307b477c02475eee698ed176e1
covid_deaths,COVID Deaths,daily,D,30,9,7,266,212,212,no,yes,covid_deaths_dataset.tsf,4656009,covid_deaths_dataset.zip,tsf_rebuilt/covid_deaths_dataset.tsf,rebuilt,266,a866e2fbc49769b240dc8406159a85cd38e8f86abba66363b0c3194d5a6299de
temperature_rain,Temperature Rain,daily,D,30,9,7,32072,725,725,no,yes,temperature_rain_dataset_without_missing_values.tsf,5129091,temperature_rain_dataset_without_missing_values.zip,,unavailable,,
sunspot,Sunspot,daily,D,30,9,7,1,73931,73931,no,yes,sunspot_dataset_without_missing_values.tsf,4654722,sunspot_dataset_without_missing_values.zip,tsf_rebuilt/sunspot_dataset_without_missing_values.tsf,rebuilt,1,00b9e16a866dd98b6821328026d592a4610933cbebb9b3166aed988793d89ed4
saugeen_river_flow,Saugeen River Flow,daily,D,30,9,7,1,23741,23741,no,yes,saugeenday_dataset.tsf,4656058,saugeenday_dataset.zip,tsf/saugeenday_dataset.tsf,original,1,f3b71e1d16ade463b8ac576683dc4b906c4157494098afe5728f875ac167aa84
us_births,US Births,daily,D,30,9,7,1,7305,7305,no,yes,us_births_dataset.tsf,4656049,us_births_dataset.zip,tsf_rebuilt/us_births_dataset.tsf,rebuilt,1,037754e1021a95f6e7761b6b41de19bb924a11b4aeecb5d01a52a08f912d3171
"""
