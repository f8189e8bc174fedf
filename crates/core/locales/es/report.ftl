# El informe diario del operador en español. Los nombres de canal,
# frecuencia y estado se muestran tal como digestd los guarda.

report-subject = Informe de digestd { $date }
report-title = Informe de digestd { $version } a las { $at }
report-digests-since = Resúmenes desde { $since }:
report-none-due = ninguno pendiente
report-channel = canal
report-frequency = frecuencia
report-due = debidos
report-posted = encolados
report-empty = vacíos
report-sent = enviados
report-failed = fallidos
report-bounces = Rebotes: { $hard } permanentes, { $soft } temporales; direcciones desactivadas: { $disabled }
report-retries = Reintentos pendientes: { $count }
report-oldest = Solicitud sin terminar más antigua: { $id } ({ $status }), encolada { $at }
report-oldest-none = Solicitud sin terminar más antigua: ninguna
report-latest-tick = Último tick: { $at }
report-latest-run = Último resumen enviado: suscripción { $subscription }, periodo { $period }, debido { $due }, enviado { $sent } ({ $late } s de retraso)
report-latest-run-none = Último resumen enviado: ninguno en las últimas 24 horas
report-lease = Bloqueo { $job }: en manos de { $holder }; última ejecución { $at }
report-nobody = nadie
report-never = nunca
