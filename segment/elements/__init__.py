"""Force elements, kinematics and loads: the physics of one element at a time (Kecskemethy, Lange &
Grabner, eq. (1), Tables 2-4, the facet contact law).
"""
