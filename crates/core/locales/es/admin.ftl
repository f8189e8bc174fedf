# Las páginas del operador en /admin en español
# (`[i18n] operator_locale`). Los nombres de estado, canal, tipo y
# resultado se muestran tal como digestd los guarda.

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

## La cuadrícula de la semana (el dibujo y su tabla son los de `digestd grid`, en inglés)

admin-grid = Cuadrícula de la semana
admin-grid-hours = Horas en
admin-grid-server = hora del servidor (UTC)
admin-grid-local = hora local de cada suscriptor
admin-grid-week = Semana del
admin-grid-user = Usuario
admin-grid-all = todos
admin-grid-show = Mostrar
admin-grid-table = Como tabla
