# Las páginas del operador en /admin en español
# (`[i18n] operator_locale`). Los nombres de estado, canal, tipo y
# resultado se traducen; los enlaces, filtros y formularios conservan la
# palabra guardada.

## Todas las páginas

admin-site = administración de digestd
admin-footer = digestd · páginas del operador
admin-nav-status = Estado
admin-nav-requests = Solicitudes
admin-nav-subscribers = Suscriptores
admin-nav-grid = Cuadrícula
admin-signed-in = sesión iniciada con el token { $token }
admin-logout = Cerrar sesión
admin-not-done = No se hizo
admin-back = Volver
admin-filter = Filtrar
admin-yes = sí
admin-no = no

## Inicio de sesión

admin-login = Acceso del operador
admin-login-token = Token de administración
admin-login-note = Un token de API con alcance admin ({ $command }). Se cambia por una cookie de sesión; el token en sí no se guarda en el navegador.
admin-login-button = Iniciar sesión
admin-login-bad = Ese no es un token de administración válido. No se cambió nada.
admin-login-many = Demasiados intentos fallidos desde esta red: vuelve a intentarlo en 15 minutos. No se comprobó nada.
admin-login-expired = Este formulario caducó: introduce el token de nuevo. No se comprobó nada.

## Estado

admin-status-at = Estado: { $now }
admin-queue = Cola
admin-th-status = estado
admin-th-requests = solicitudes
admin-oldest-pending = Solicitud pendiente más antigua:
admin-ticks = Últimos ticks
admin-ticks-none = Ningún tick ha registrado todavía una ejecución.
admin-th-tick-at = tick a las
admin-th-runs = ejecuciones
admin-th-digests = resúmenes
admin-th-empty-runs = ejecuciones vacías
admin-th-late = retraso de la última ejecución
admin-ticks-note = Los ticks tal como los registraron sus ejecuciones (un tick que no encontró nada pendiente no registra ninguna ejecución). No se guarda cuánto tardó cada tick; las duraciones de este proceso están en { $metrics } ({ $metric }).
admin-leases = Concesiones
admin-leases-none = Todavía no se ha ejecutado ninguna tarea.
admin-th-job = tarea
admin-th-holder = en manos de
admin-th-until = hasta
admin-th-last-run = última ejecución
admin-events = Eventos para el operador
admin-events-note = En espera: todos; enviados, fallidos y omitidos: los de las últimas 24 horas.
admin-th-events = eventos
admin-events-oldest = Evento en espera más antiguo:
admin-events-failure = Último fallo:
admin-events-commands = { $list } los muestra; { $replay } vuelve a enviar un periodo.
admin-events-off = no se envían: [events] url está vacío
admin-events-to = se envían a { $url }
admin-event-failed = evento { $id } ({ $kind }): { $error }
admin-on-time = a tiempo
admin-delay-s = { $s } s
admin-delay-min = { $min } min { $s } s
admin-delay-h = { $h } h { $min } min
admin-ago = { $at } (hace { $delay })
admin-just-now = { $at } (ahora mismo)
admin-none-pending = ninguna pendiente
admin-nobody = nadie
admin-expired-lease = nadie (concesión caducada de { $holder })
admin-never = nunca

## Solicitudes

admin-filter-status = Estado
admin-requests-any = cualquiera
admin-filter-sender = Remitente
admin-filter-recipient = Destinatario
admin-requests-none = Ninguna solicitud coincide.
admin-th-id = id
admin-th-kind = tipo
admin-th-from = de
admin-th-to = para
admin-th-subject = asunto
admin-th-requested = solicitada
admin-th-finished = terminada
admin-requests-older = Solicitudes anteriores
admin-request = Solicitud { $id }
admin-cancel = Cancelar esta solicitud
admin-cancel-note = Lo que aún no se ha entregado no se enviará nunca.
admin-cancelled = Cancelada.
admin-recipients = Destinatarios
admin-not-expanded = Aún sin expandir: ninguna pasada de la cola la ha tomado.
admin-no-recipient = Nadie: todos los miembros del grupo se dieron de baja, o el grupo no tenía miembros.
admin-th-party = parte
admin-th-channel = canal
admin-th-address = dirección
admin-th-state = situación
admin-th-retries = reintentos
admin-th-last-reply = última respuesta
admin-delivered = entregado
admin-gave-up = abandonado
admin-open = abierto
admin-attempts = Intentos
admin-attempts-none = Aún no hay intentos.
admin-th-when = cuándo
admin-th-outcome = resultado
admin-th-reply = respuesta
admin-all-requests = Todas las solicitudes

## Suscriptores y una suscripción

admin-filter-name = El nombre contiene
admin-filter-disabled = Solo con una dirección desactivada
admin-users-none = Ningún usuario coincide.
admin-th-verified = verificada
admin-th-bounces = rebotes
admin-disabled = desactivada
admin-enabled = activa
admin-reenable = Reactivar
admin-enabled-notice = Reactivada: los mensajes vuelven a ir a esa dirección; su contador de rebotes empieza de cero.
admin-no-subscriptions = Sin suscripciones.
admin-their-time = { $when } (hora del suscriptor)
admin-paused = en pausa
admin-details = detalles
admin-opted-out = Dado de baja de suscripciones de grupo:
admin-more = Más
admin-subscription = Suscripción { $id }
admin-party-time = { $when } (hora de { $party })
admin-optouts = Miembros dados de baja
admin-optouts-none = Nadie: sus resúmenes llegan a todos los miembros.
admin-optouts-note = Sus resúmenes dejan fuera a estos miembros hasta que se anule la baja, desde su página o desde aquí.
admin-th-member = miembro
admin-th-since = desde
admin-clear = Anular
admin-cleared = Anulado: los resúmenes del grupo vuelven a llegar a ese miembro a partir del próximo.

## La cuadrícula de la semana (también el dibujo y la tabla; `digestd grid` sigue en inglés)

admin-grid = Cuadrícula de la semana
admin-grid-hours = Horas en
admin-grid-server = hora del servidor (UTC)
admin-grid-local = hora local de cada suscriptor
admin-grid-week = Semana del
admin-grid-user = Usuario
admin-grid-all = todos
admin-grid-show = Mostrar
admin-grid-table = Como tabla
admin-grid-title = resúmenes de la semana del { $week } ({ $scope })
admin-grid-scope-all = todos los usuarios
admin-grid-scope-user = usuario { $user }
admin-grid-table-title = { $title }, { $time }
admin-grid-time-local = hora local
admin-grid-time-server = hora del servidor (UTC)
admin-grid-subtitle = Resúmenes por hora de la semana, { $time }
admin-grid-cell = { $day } { $hour } { $time }: { $digests ->
    [one] { $digests } resumen
   *[other] { $digests } resúmenes
}, { $empty ->
    [one] { $empty } ejecución vacía
   *[other] { $empty } ejecuciones vacías
}
admin-grid-dot = { $empty ->
    [one] { $empty } ejecución vacía
   *[other] { $empty } ejecuciones vacías
}
admin-grid-hour-axis = hora del día ({ $time })
admin-grid-day-axis = día
admin-grid-scale = resúmenes por hora:
admin-grid-empty-runs = { $empty ->
    [one] { $empty } ejecución vacía (se ejecutó sin nada que enviar) no contada
   *[other] { $empty } ejecuciones vacías (se ejecutaron sin nada que enviar) no contadas
}
admin-grid-peak = pico: { $day } { $hour } con { $digests } de { $total ->
    [one] { $total } resumen
   *[other] { $total } resúmenes
}
admin-grid-total = total

## Los nombres de lo que guarda la cola (los enlaces, filtros y
## formularios conservan la palabra guardada)

admin-status-pending = pendiente
admin-status-sending = enviándose
admin-status-sent = enviada
admin-status-partial-failure = fallida en parte
admin-status-failed = fallida
admin-status-cancelled = cancelada
admin-event-status-pending = pendiente
admin-event-status-sent = enviado
admin-event-status-failed = fallido
admin-event-status-skipped = omitido
admin-kind-digest = resumen
admin-kind-notification = notificación
admin-outcome-sent = aceptado
admin-outcome-transient = rechazo temporal
admin-outcome-permanent = rechazo definitivo
admin-outcome-gave-up = abandonado

## Lo que un filtro o un formulario rechazó (un valor introducido se
## muestra escapado y recortado; no se cambió nada)

admin-refused-long = El campo «{ $field }» tiene más de { $max } caracteres.
admin-refused-control = El campo «{ $field }» contiene un carácter de control, que no está permitido.
admin-refused-status = «{ $value }» no es un estado: elige uno de la lista.
admin-refused-name = «{ $value }» no es un nombre válido: usa de 1 a { $max } letras, dígitos, «.», «_» o «-».
admin-refused-no-party = No hay ningún usuario ni grupo llamado «{ $value }».
admin-refused-before = «{ $value }» no es un identificador de solicitud.
admin-refused-disabled = «{ $value }» no es un valor válido para «{ admin-filter-disabled }»: usa 1 o nada.
admin-refused-time = «{ $value }» no es una hora de referencia de la cuadrícula: elige { admin-grid-server } o { admin-grid-local }.
admin-refused-week = «{ $value }» no es un instante: usa RFC 3339, por ejemplo 2026-11-23T00:00:00Z.
admin-refused-channel = «{ $value }» no es un canal.
admin-refused-no-request = Esa solicitud no existe.
admin-refused-no-subscription = Esa suscripción no existe.
admin-refused-not-open = Esta solicitud ya terminó ({ $status }): solo se pueden cancelar las solicitudes pendientes o que se están enviando.
admin-refused-no-address = { $party } no tiene dirección de { $channel }.
admin-refused-not-opted-out = { $member } no se ha dado de baja de esta suscripción.
